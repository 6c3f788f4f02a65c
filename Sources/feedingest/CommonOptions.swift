/// The options many commands share: `--help`, `--quiet` and `--store`, each command saying in its help what they do
/// there.
enum CommonOptions {
    /// `-h, --help`: every command's, last in its table.
    static let help = Flag("-h", "--help", help: "show this help")

    /// `-q, --quiet`, with what it leaves out for the command.
    static func quiet(_ help: String) -> Flag { Flag("-q", "--quiet", help: help) }

    /// `--store STORE`, as the commands that read or write a store take it.
    static let store = ValueOption<String>(
        "--store", "STORE", .text,
        help: "the store, an SQLite path or a PostgreSQL URI (default: $FEEDINGEST_STORE, else "
            + "$XDG_DATA_HOME/feedingest/feedingest.sqlite, else ~/.local/share/feedingest/feedingest.sqlite)")
}
