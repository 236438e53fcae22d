import Foundation

@_silgen_name("LLVMFuzzerRunDriver")
private func runFuzzerDriver(
    _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt
) -> CInt

/// Hands a fuzz target's entry point to libFuzzer's driver and exits with its status.
///
/// Each target also exports the same function as `LLVMFuzzerTestOneInput`, which libFuzzer's own `main` references
/// (engineering.md §5.7).
public func runFuzzer(_ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt) -> Never {
    var argc = CommandLine.argc
    var argv = CommandLine.unsafeArgv
    exit(runFuzzerDriver(&argc, &argv, callback))
}
