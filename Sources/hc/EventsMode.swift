import HTTPContent

/// `--as events`: Server-Sent Events printed as each arrives, in the stream's own field syntax
/// (`event:` when not "message", `id:` when set, `retry:` when given, a `data:` line per line of
/// data, a blank line after each event), written at once so a pipe sees every event live.
enum EventsMode: BodyMode {
    static let name = "events"
    static func run(_ exchange: Exchange) throws(HTTPContentError) {
        var acceptance = SSE.defaultAcceptance()
        if !exchange.options.acceptType.isEmpty { acceptance.contentTypes = exchange.acceptance.contentTypes }
        if exchange.acceptance.statusCodes != Acceptance().statusCodes {
            acceptance.statusCodes = exchange.acceptance.statusCodes
        }
        let r = try exchange.send(streamsToStdout: true) {
            SSE(acceptance: acceptance) { event in Output.write(EventsMode.format(event)) }
        }
        if r.status == 204 && !exchange.options.silent { Output.writeError("hc: 204: the server sends no events\n") }
    }

    static func format(_ event: ServerSentEvent) -> String {
        var out = ""
        if event.event != "message" { out += "event: \(event.event)\n" }
        if !event.id.isEmpty { out += "id: \(event.id)\n" }
        if let retry = event.retry { out += "retry: \(retry)\n" }
        for line in event.data.split(separator: "\n", omittingEmptySubsequences: false) { out += "data: \(line)\n" }
        return out + "\n"
    }
}

/// `--as json-lines`: JSON records (JSON Lines / NDJSON, RFC 7464 sequences by Content-Type)
/// printed one per line, compact, as each is parsed.
enum JSONLinesMode: BodyMode {
    static let name = "json-lines"
    static func run(_ exchange: Exchange) throws(HTTPContentError) {
        var acceptance = exchange.acceptance
        if exchange.options.acceptType.isEmpty { acceptance.contentTypes = JSONLines.defaultAcceptance().contentTypes }
        _ = try exchange.send(streamsToStdout: true) {
            JSONLines(options: JSONRecordOptions(maxRecordSize: exchange.options.maxSize ?? 16 << 20),
                      acceptance: acceptance) { value in
                var text = (try? value.serialized(pretty: false)) ?? []
                text.append(0x0A)
                text.withUnsafeBytes { Output.write($0) }
            }
        }
    }
}
