import HTTPContent
#if canImport(Glibc)
import Glibc
#endif

/// A one-line progress bar on stderr, drawn only when stderr is a terminal.
final class ProgressBar {
    private var lastDraw = 0
    private var drawn = false

    static func forStandardError() -> ProgressBar? {
        isatty(2) == 1 ? ProgressBar() : nil
    }

    func update(_ p: TransferProgress) {
        // Redraw at most every 64 KiB so a fast transfer is not slowed by the terminal.
        guard p.received - Int64(lastDraw) >= 65536 || (p.expected > 0 && p.received == p.expected) else { return }
        lastDraw = Int(p.received)
        let width = 30
        var line: String
        if p.expected > 0 {
            let filled = Int(Double(width) * Double(p.received) / Double(p.expected))
            let percent = Int(100 * Double(p.received) / Double(p.expected))
            line = "[" + String(repeating: "#", count: min(filled, width))
                + String(repeating: " ", count: max(width - filled, 0)) + "] \(percent)% "
        } else {
            line = "[receiving] "
        }
        line += "\(human(p.received))"
        if p.expected > 0 { line += " / \(human(p.expected))" }
        Output.writeError("\r" + line + "\u{1B}[K")
        drawn = true
    }

    func finish() {
        if drawn { Output.writeError("\n") }
    }

    private func human(_ bytes: Int64) -> String {
        let units = ["B", "KiB", "MiB", "GiB"]
        var value = Double(bytes)
        var unit = 0
        while value >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(bytes) B" : "\(Int(value * 10) / 10).\(Int(value * 10) % 10) \(units[unit])"
    }
}
