// feedingest-bench: ExpatXML against raw libexpat and Foundation's XMLParser, side by side.
//
//     swift run -c release feedingest-bench [--rounds N] [--quick] [--fixtures DIR] [--skip-memory]
//
// Hidden child modes (the benchmark and the memory test re-execute this binary):
//     --probe VARIANT FILE                      stream FILE from disk in 64 KiB chunks, print one JSON line
//     --probe-generated VARIANT FORMAT ITEMS    generate a feed on the fly and parse it chunk by chunk (no file)
//     --measure ARGS…                           run this binary with ARGS in a child, print its ru_maxrss (wait4)
//                                               and its report as one JSON line (see Probe.swift for why)
#if canImport(Glibc)
import Glibc
#endif

#if DEBUG
let isDebugBuild = true
#else
let isDebugBuild = false
#endif

exit(BenchmarkMain.run(arguments: Array(CommandLine.arguments.dropFirst()), isDebugBuild: isDebugBuild))
