import ExpatXML
import Testing

@Test func smoke() {
    let xml = #"<?xml version="1.0"?><!-- c --><rss xmlns:dc="http://purl.org/dc/elements/1.1/" version="2.0"><a>t &amp; <![CDATA[<b>]]> u</a><dc:creator x="1">x</dc:creator></rss>"#
    let result = EventRecorder.record(Array(xml.utf8))
    print(result.events.joined(separator: "\n"))
    #expect(result.error == nil)
    let bytewise = EventRecorder.record(Array(xml.utf8), splits: Array(1..<xml.utf8.count))
    #expect(bytewise.events == result.events)
}
