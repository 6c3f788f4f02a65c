/// A command's options, in the order its help lists them: what its parser accepts, the Options section of its help,
/// and the names a mistyped option is matched against. `-h, --help` is always last.
struct OptionTable: Sendable {
    /// Every option, `--help` included.
    let options: [Option]
    private let byName: [String: Option]

    /// A table of `declarations`, in help order, followed by ``CommonOptions/help`` unless they list it. Two options of
    /// one table never share a name.
    init(_ declarations: [any OptionDeclaration]) {
        let listed = declarations.map(\.option)
        options = listed.contains(CommonOptions.help.option) ? listed : listed + [CommonOptions.help.option]
        var byName: [String: Option] = [:]
        for option in options {
            for name in option.names {
                precondition(byName.updateValue(option, forKey: name) == nil, "two options are called \(name)")
            }
        }
        self.byName = byName
    }

    /// The option called `name` (any of its names), if the table has one.
    func option(named name: String) -> Option? { byName[name] }

    /// Whether `option` is one of this table's.
    func contains(_ option: Option) -> Bool { byName[option.name] == option }

    /// Every name of every option, sorted: what a mistyped name is matched against.
    var names: [String] { byName.keys.sorted() }

    // MARK: The help

    /// Where the options' help begins: two spaces, the label, at least two spaces. A longer label has a line of its own.
    static let helpColumn = 20
    /// The width the help is wrapped to.
    static let helpWidth = 116

    /// The lines of the help's Options section for `subset` (every option by default), each option's label in a
    /// column of its own and its help wrapped beside it; a repeatable option says so.
    func help(_ subset: [any OptionDeclaration]? = nil) -> String {
        let shown = subset.map { $0.map(\.option) } ?? options
        var lines: [String] = []
        for option in shown {
            precondition(contains(option), "\(option.name) is not in the table")
            var label = "  " + option.label
            var text = option.help
            if option.isRepeatable { text += " (repeatable)" }
            let words = Self.wrap(text, width: Self.helpWidth - Self.helpColumn)
            if label.count + 2 > Self.helpColumn {
                lines.append(label)
                label = ""
            }
            for (index, line) in words.enumerated() {
                let lead = index == 0 ? label : ""
                lines.append(lead + String(repeating: " ", count: Self.helpColumn - lead.count) + line)
            }
        }
        return lines.joined(separator: "\n")
    }

    /// `text` in lines of at most `width` characters, broken between words (a longer word has a line of its own).
    static func wrap(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ", omittingEmptySubsequences: true) {
            if line.isEmpty {
                line = String(word)
            } else if line.count + 1 + word.count <= width {
                line += " " + word
            } else {
                lines.append(line)
                line = String(word)
            }
        }
        if !line.isEmpty { lines.append(line) }
        return lines
    }
}
