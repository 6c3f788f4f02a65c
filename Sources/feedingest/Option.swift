/// One option of a command line: its names, the placeholder of its value (none for a flag), whether it may be given
/// more than once, and what the help says of it.
struct Option: Sendable, Hashable {
    /// Its names, short first: `["-q", "--quiet"]`.
    let names: [String]
    /// The placeholder of its value in the help (`N`, `D`, `STORE`); `nil` for a flag, which takes no value.
    let placeholder: String?
    /// Whether every value given is kept (`--feed A --feed B`); otherwise the last one given counts.
    let isRepeatable: Bool
    /// What it does, one sentence or a few, for the help (which wraps it).
    let help: String

    /// The name messages use and values are filed under: the long one.
    var name: String { names[names.count - 1] }

    /// Whether it takes a value.
    var takesValue: Bool { placeholder != nil }

    /// How the help shows it: `-q, --quiet`, `--jobs N`.
    var label: String { names.joined(separator: ", ") + (placeholder.map { " " + $0 } ?? "") }
}

/// A declared option, flag or value, as a command's ``OptionTable`` lists it.
protocol OptionDeclaration: Sendable {
    /// The option's names, value placeholder and help.
    var option: Option { get }
}

/// An option without a value, given or not: `--all`, `-q, --quiet`.
struct Flag: OptionDeclaration {
    let option: Option

    /// A flag called by `names` (short first).
    init(_ names: String..., help: String) {
        option = Option(names: names, placeholder: nil, isRepeatable: false, help: help)
    }
}

/// An option with a value, which its ``Conversion`` checks and turns into a `Value`: `--jobs N`, `--since DATE`.
struct ValueOption<Value>: OptionDeclaration {
    let option: Option
    /// How the text given becomes the value, and the usage error when it does not.
    let conversion: Conversion<Value>

    /// An option called `name` whose value the help shows as `placeholder`; `repeatable` keeps every value given.
    init(_ name: String, _ placeholder: String, repeatable: Bool = false, _ conversion: Conversion<Value>, help: String) {
        option = Option(names: [name], placeholder: placeholder, isRepeatable: repeatable, help: help)
        self.conversion = conversion
    }

    /// The same option, with the help a command gives it.
    func described(_ help: String) -> ValueOption {
        ValueOption(option.name, option.placeholder ?? "", repeatable: option.isRepeatable, conversion, help: help)
    }
}

extension Flag {
    /// The same flag, with the help a command gives it.
    func described(_ help: String) -> Flag {
        Flag(names: option.names, help: help)
    }

    private init(names: [String], help: String) {
        option = Option(names: names, placeholder: nil, isRepeatable: false, help: help)
    }
}
