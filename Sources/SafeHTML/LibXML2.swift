// The only file that calls libxml2: its HTML parser reads a fragment into a tree (recovering from tag soup as
// libxml2's HTMLparser.c does), and `HTMLTree.walk` hands the tree out as start, end and text events, so the
// sanitiser's rules stay in plain Swift (HTMLSanitizer.swift).

import CLibXML2

/// One node of a parsed HTML fragment as the walk reports it.
enum HTMLNodeEvent {
    /// An element opens: its lower-cased name and its attributes in document order (names lower-cased, values with
    /// character references already decoded by libxml2).
    case start(name: String, attributes: [(name: String, value: String)])
    /// The element opened by the matching `start` closes.
    case end(name: String)
    /// Character data (entity and character references decoded).
    case text(String)
}

/// A fragment parsed by libxml2's HTML parser. Confined to the thread that made it.
struct HTMLTree: ~Copyable {
    private let document: htmlDocPtr

    /// libxml2's one-time initialisation; `xmlInitParser` must run once before parsers are used on several threads
    /// (libxml2's threads documentation). A `static let` runs it exactly once, thread-safely.
    private static let initialised: Bool = {
        xmlInitParser()
        return true
    }()

    /// The parser options: recover from any malformed markup, report nothing on stderr, never touch the network,
    /// keep the encoding we pass (UTF-8) whatever a `<meta charset>` in the fragment says, and no default DOCTYPE.
    /// See `htmlParserOption` in HTMLparser.h. `XML_PARSE_HUGE` lifts libxml2's nesting limit (256), past which it
    /// would stop and drop the rest of the fragment: the feed's own limits (bytes, depth) bound the input instead,
    /// and neither libxml2's HTML parser nor this walk recurses.
    private static let options: Int32 = Int32(HTML_PARSE_RECOVER.rawValue | HTML_PARSE_NOERROR.rawValue | HTML_PARSE_NOWARNING.rawValue
                                              | HTML_PARSE_NONET.rawValue | HTML_PARSE_IGNORE_ENC.rawValue | HTML_PARSE_NODEFDTD.rawValue
                                              | XML_PARSE_HUGE.rawValue)

    /// The prefix that puts the fragment inside an HTML `body`, so that text and elements at its top level stay
    /// where they are (libxml2 would otherwise move a leading `<meta>` or `<title>` into an implied `head`).
    private static let prefix = Array("<!DOCTYPE html><html><head><meta charset=\"utf-8\"></head><body>".utf8)

    /// Parses `fragment` as the content of an HTML body; `nil` when libxml2 could not make a document (out of memory).
    init?(fragment: String) {
        _ = Self.initialised
        var bytes = Self.prefix
        bytes.append(contentsOf: fragment.utf8)
        let parsed: htmlDocPtr? = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                htmlReadMemory(chars.baseAddress, Int32(clamping: chars.count), nil, "UTF-8", Self.options)
            }
        }
        guard let parsed else { return nil }
        document = parsed
    }

    deinit { xmlFreeDoc(document) }

    /// Walks the nodes inside `body` (or, failing that, the root element) in document order, without recursion, so
    /// that however deep the markup nests the walk needs no stack. Comments, processing instructions and DTD nodes are
    /// not reported. `visit` returns `false` for a `start` whose content should be skipped (its `end` is still reported).
    func walk(_ visit: (HTMLNodeEvent) -> Bool) {
        guard let root = xmlDocGetRootElement(document) else { return }
        let top = Self.body(under: root) ?? root
        var node = top.pointee.children
        while let current = node {
            var descend = false
            switch current.pointee.type {
            case XML_ELEMENT_NODE:
                let name = Self.string(current.pointee.name).lowercased()
                descend = visit(.start(name: name, attributes: Self.attributes(of: current))) && current.pointee.children != nil
                if !descend { _ = visit(.end(name: name)) }
            case XML_TEXT_NODE, XML_CDATA_SECTION_NODE:
                _ = visit(.text(Self.string(current.pointee.content)))
            default:
                break  // comments, processing instructions, DTDs, entity declarations: never reported
            }
            if descend {
                node = current.pointee.children
                continue
            }
            // Next sibling, else climb, closing each element left, until a sibling or the top.
            var climbing: UnsafeMutablePointer<xmlNode>? = current
            node = nil
            while let at = climbing, at != top {
                if let next = at.pointee.next {
                    node = next
                    break
                }
                climbing = at.pointee.parent
                if let parent = climbing, parent != top, parent.pointee.type == XML_ELEMENT_NODE {
                    _ = visit(.end(name: Self.string(parent.pointee.name).lowercased()))
                }
            }
        }
    }

    /// The `body` element among the root's children.
    private static func body(under root: UnsafeMutablePointer<xmlNode>) -> UnsafeMutablePointer<xmlNode>? {
        var child = root.pointee.children
        while let node = child {
            if node.pointee.type == XML_ELEMENT_NODE, string(node.pointee.name).lowercased() == "body" { return node }
            child = node.pointee.next
        }
        return nil
    }

    /// An element's attributes, names lower-cased, values as libxml2 decoded them (`xmlNodeListGetString` of the
    /// attribute's children; a value-less attribute such as `<input checked>` gives "").
    private static func attributes(of element: UnsafeMutablePointer<xmlNode>) -> [(name: String, value: String)] {
        var result: [(name: String, value: String)] = []
        var attribute = element.pointee.properties
        while let current = attribute {
            let name = string(current.pointee.name).lowercased()
            var value = ""
            if let text = xmlNodeListGetString(element.pointee.doc, current.pointee.children, 1) {
                value = String(cString: text)
                clibxml2_free(text)
            }
            result.append((name, value))
            attribute = current.pointee.next
        }
        return result
    }

    /// A libxml2 string (UTF-8, NUL-terminated) as a Swift `String`; `nil` is "".
    private static func string(_ text: UnsafePointer<xmlChar>?) -> String {
        guard let text else { return "" }
        return String(cString: text)
    }
}
