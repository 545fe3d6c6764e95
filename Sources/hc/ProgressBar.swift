import HTTPContent
#if canImport(Glibc)
import Glibc
#endif

/// A one-line progress bar on stderr, drawn only when stderr is a terminal (HC_PROGRESS=1
/// forces it, for tests): received size, total when known, rate and time left.
final class ProgressBar {
    private let start = ProgressBar.now()
    private var lastDraw = -1.0
    private var drawn = false
    private var last: TransferProgress?

    static func forStandardError() -> ProgressBar? {
        if let forced = getenv("HC_PROGRESS"), String(cString: forced) == "1" { return ProgressBar() }
        return isatty(2) == 1 ? ProgressBar() : nil
    }

    func update(_ p: TransferProgress) {
        last = p
        let t = ProgressBar.now()
        // At most 10 redraws a second: a fast transfer is not slowed by the terminal.
        guard t - lastDraw >= 0.1 else { return }
        lastDraw = t
        draw(p, elapsed: t - start)
    }

    /// Draws the final figures (a fast transfer may have had no redraw yet) and ends the line.
    func finish() {
        if let last, last.received > 0 || drawn { draw(last, elapsed: ProgressBar.now() - start) }
        if drawn { Output.writeError("\n") }
    }

    private func draw(_ p: TransferProgress, elapsed: Double) {
        Output.writeError("\r" + ProgressBar.line(p, elapsed: elapsed) + "\u{1B}[K")
        drawn = true
    }

    /// `[#####     ] 50% 5.0 MiB / 10.0 MiB  2.5 MiB/s  ETA 0:02`
    static func line(_ p: TransferProgress, elapsed: Double) -> String {
        let rate = elapsed > 0 ? Double(p.received) / elapsed : 0
        let width = 24
        var line: String
        if p.expected > 0 {
            let fraction = min(1, Double(p.received) / Double(p.expected))
            let filled = Int(Double(width) * fraction)
            line = "[" + String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled)
                + "] \(Int(100 * fraction))% \(human(p.received)) / \(human(p.expected))"
        } else {
            line = "[receiving] \(human(p.received))"
        }
        line += "  \(human(Int64(rate)))/s"
        if p.expected > 0 {
            if p.received >= p.expected {
                line += "  in \(clock(elapsed))"
            } else if rate > 0 {
                line += "  ETA \(clock(Double(p.expected - p.received) / rate))"
            } else {
                line += "  ETA --:--"
            }
        }
        return line
    }

    static func human(_ bytes: Int64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(bytes)
        var unit = 0
        while value >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(bytes) B" : "\(Int(value * 10) / 10).\(Int(value * 10) % 10) \(units[unit])"
    }

    static func clock(_ seconds: Double) -> String {
        let s = Int(seconds.rounded())
        let two = { (n: Int) in n < 10 ? "0\(n)" : "\(n)" }
        return s >= 3600 ? "\(s / 3600):\(two(s / 60 % 60)):\(two(s % 60))" : "\(s / 60):\(two(s % 60))"
    }

    private static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}
