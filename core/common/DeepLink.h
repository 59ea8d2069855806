// Deep links: a `map-inspector:` URL that opens the window on a trace or incident bundle, at a
// time, with an agent (or a message) selected. Browsers, chat tools and runbooks hand them to the
// operating system, which starts `map-inspector <link>` (the scheme is registered by the
// packages: packaging/README.md).
//
// Grammar (one line, no spaces):
//
//   map-inspector://open?file=<path>[&t=<time>][&agent=<id>][&message=<id>]
//
//  - The scheme is compared without case. `map-inspector:open?…` (no "//") is accepted too, as
//    some launchers drop them, and so is a '/' after the action (`map-inspector://open/?…`).
//  - The only action is "open" (compared without case); any other is refused.
//  - Every value is percent-encoded (UTF-8). '+' is a plus sign, not a space. A '#' must be written
//    %23: a link with a fragment is refused rather than cut short at it. A '%' that does not start
//    two hex digits is refused.
//  - file (required): the absolute local path of a trace or an incident bundle (QDir's idea of
//    absolute, so `C:/x` and `C:\x` on Windows). Relative paths, Qt resource paths (":/…"),
//    network paths ("//host/…", "\\host\…": opening them would make a clicked link reach out to
//    another machine), and paths holding a NUL are refused.
//  - t (optional): epoch milliseconds ("1795705200123") or an ISO 8601 time, with or without
//    milliseconds ("2026-11-26T15:00:00.123Z", "2026-11-26T16:00:00+01:00"); an ISO time without
//    an offset is UTC, as for imported logs. Between 1970 and the year 9999.
//  - agent, message (optional): ids, selected when the file is open.
//  - An empty value (`agent=`) counts as not given. The known keys are compared with case and
//    each may be given once: a second one is refused (no guessing which was meant). Unknown keys
//    are ignored, so links written by later versions still open in this one.
//  - At most 8192 characters; longer text is refused before it is looked at.
//
// A link never carries a credential (token, password, API key): it names a local file and ids
// only, and makeDeepLink() has nothing else to write. Links end up in chat logs and browser
// histories; whatever opens the file asks for credentials the usual way.
//
// Every function here is pure and thread-safe (any thread); none touches the file system.
#pragma once

#include "common/ErrorOr.h"

#include <QString>
#include <QtGlobal>

#include <optional>

namespace mapi {

struct DeepLink
{
    QString file;                // absolute local path of a trace or incident bundle
    std::optional<qint64> timeMs; // the time to show, epoch ms
    QString agentId;             // the agent to select; empty: none
    QString messageId;           // the message to select; empty: none
};

inline bool operator==(const DeepLink &a, const DeepLink &b)
{
    return a.file == b.file && a.timeMs == b.timeMs && a.agentId == b.agentId && a.messageId == b.messageId;
}
inline bool operator!=(const DeepLink &a, const DeepLink &b)
{
    return !(a == b);
}

// The longest link parseDeepLink() looks at, in characters.
constexpr int kMaxDeepLinkLength = 8192;

// The link in `text` (surrounding white space ignored), or why it is not one. The error is a
// sentence fragment for the operator ("not a MAP Inspector link: …").
ErrorOr<DeepLink> parseDeepLink(const QString &text);

// The canonical link for `link`: `map-inspector://open?file=…` with t as epoch ms, agent and
// message when not empty. Every value is percent-encoded except the file's '/', so
// parseDeepLink(makeDeepLink(x)) == x for every x that parseDeepLink() can return (any path:
// spaces, '&', '#', '?', '%', '+', non-ASCII). It does not check `link`: a relative file or a time
// before 1970 gives a link that parseDeepLink() refuses.
QString makeDeepLink(const DeepLink &link);

// Whether a command-line argument is meant as a link: it starts with "map-inspector:" (any case,
// surrounding white space ignored). Such an argument goes to parseDeepLink(), not to a file open.
bool isDeepLink(const QString &arg);

// The window's positional argument as a local path, or why it is not one. A `file://` URL
// (launchers pass %u that way) becomes its local path, decoded ("file:///tmp/a%20b.jsonl" ->
// "/tmp/a b.jsonl"; "file://localhost/tmp/x" is "/tmp/x"); anything else, including a link or a
// path, comes back unchanged. Refused, on every platform: a file URL with another host
// ("file://host/share/x", which QUrl makes the UNC path "//host/share/x"), one that does not
// parse, and any path that starts with two slashes of either kind ("//host/…", "\\host\…",
// "\\?\UNC\…"): opening those would reach out to another machine (and, on Windows, offer it
// the user's credentials) because a launcher or a clicked link said so.
ErrorOr<QString> localPathFromArgument(const QString &arg);
// localPathFromArgument()'s path, or an empty string where it refuses (it says why).
QString localFileFromArgument(const QString &arg);

} // namespace mapi
