// Incident bundles: one file an operator hands to someone else, holding the trace of an incident
// (a time range of any readable trace), its bookmarks and notes, the selection, the alerts and
// pictures of the views, with the operator's own redaction applied to every part of it.
//
// A bundle IS a MAP Inspector trace (docs/trace-format.md): its header carries two more members,
// "bundle" (docs/interop.md lists its fields) and "bundlePictures" (the pictures, base64 PNG, put
// into the line after the secret rules ran over the rest, which could otherwise alter a
// picture's bytes), so it opens wherever a trace opens (the window, `state --trace`,
// `stats --trace`) and older readers replay it as a plain trace.
//
// The range: records from `from` to `to`. Before `from`, what establishes the state at `from` is
// kept (agents, scopes, sessions, subscriptions, the requests that responses answer, sockets) and
// the message traffic is left out (map/message notifications, message and delivery events,
// map/send and map/inject requests with their responses, also when a response comes after
// `from`): the bundle opens with the system as it was at `from`, without the history that led
// there. How many records were left out is counted.
// The sequence numbers of the events left out are said by "skip" records (docs/trace-format.md),
// so that they do not read as a gap in delivery; every frame kept is as it was.
//
// Redaction, on top of the secret rules every trace gets (common/Redaction.h):
//   - key names: a JSON member whose name equals one of them (case-insensitive) has its value
//     replaced, at any depth, in frames, operator actions and the bundle's data, and inside
//     strings that are themselves JSON (to a depth of 4, as the secret rules);
//   - patterns (regular expressions, QRegularExpression/PCRE2 syntax): every match in every
//     string, member name and number of every frame and of the bundle's data (note, bookmarks,
//     selection, alerts), and in non-JSON frames, URLs and close reasons, is replaced (a number
//     that matches becomes a string);
//   - the replacement is a pseudonym, "REDACTED-<n>", the same for the same text everywhere in
//     the bundle and different for different texts (the first kMaxPseudonyms of them; then
//     "REDACTED"), so that two agents whose ids are redacted stay two agents, and a redacted id
//     still names the same agent in frames, selection and alerts;
//   - binary frames cannot be searched: with any rule set they are left out (counted).
// The rules themselves are not written into the bundle (a pattern may spell the secret), nor
// into error messages (patterns are named by number): only how many there were and what they
// replaced. Pictures are not redacted after the fact: the window draws them from the redacted
// bundle (ui/dialogs/IncidentDialog).
//
// Thread: any (no QObject). Memory: one record at a time, plus the bundle's data.
#pragma once

#include "common/FileIdentity.h" // isSameFile(): a bundle never replaces its source

#include "common/ErrorOr.h"
#include "protocol/JsonRpc.h"
#include "trace/Trace.h"
#include "trace/TraceTimeline.h"

#include <QByteArray>
#include <QHash>
#include <QList>
#include <QRegularExpression>
#include <QString>
#include <QStringList>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace mapi {

constexpr int kIncidentBundleVersion = 1;
// All pictures together, as PNG bytes: 10.7 MiB in base64, and with the rest of the header
// (bounded below) the line stays under kMaxBundleHeaderBytes, under the reader's 16 MiB limit.
constexpr qint64 kMaxBundlePictureBytes = 8LL * 1024 * 1024;
constexpr qint64 kMaxBundleHeaderBytes = 14LL * 1024 * 1024;
constexpr int kMaxBundlePatterns = 100;
constexpr int kMaxBundleNoteChars = 100000;
constexpr int kMaxBundleBookmarks = 1000;      // each: title ≤ 200, note ≤ 2,000 characters
constexpr int kMaxBundleAlerts = 2000;         // each at most kMaxBundleAlertBytes as JSON
constexpr int kMaxBundleAlertBytes = 4096;
constexpr int kMaxBundleSelection = 10000;
constexpr int kMaxBundleKeyNames = 1000;

constexpr int kMaxPseudonyms = 1000000;  // distinct redacted texts numbered (about 40 B each)

// What the redaction changed. Counts are of replacements (a string with two matches counts 2).
struct RedactionCounts
{
    std::vector<qint64> perKeyName;   // in the order of BundleRedactor::keyNames()
    std::vector<qint64> perPattern;   // in the order of BundleRedactor::patternNumbers()
    qint64 recordsChanged = 0;        // records of the trace that at least one rule changed
    qint64 binaryFramesLeftOut = 0;
    qint64 total() const;
};

class BundleRedactor
{
public:
    // Checks every pattern (an invalid one is an error that names it by number and says why)
    // and the bounds above. Empty names and patterns are ignored.
    static ErrorOr<BundleRedactor> make(const QStringList &keyNames, const QStringList &patterns);
    BundleRedactor() = default;

    bool isEmpty() const { return m_keyNames.isEmpty() && m_patterns.empty(); }
    const QStringList &keyNames() const { return m_keyNames; }      // lowercase, unique
    const std::vector<int> &patternNumbers() const { return m_patternNumbers; } // 1-based, in the list given
    int keyNameCount() const { return int(m_keyNames.size()); }
    int patternCount() const { return int(m_patterns.size()); }

    // Each returns whether it changed something, and counts what it replaced.
    // `numbers`: numbers that match a pattern are replaced (frames); false keeps them (the
    // bundle's own times and counts).
    bool redact(Json &json, bool numbers = true);
    bool redact(QString &text);
    bool redact(QByteArray &utf8Text);
    const RedactionCounts &counts() const { return m_counts; }
    void resetCounts();
    // Copies share the pseudonyms (one table per bundle); this starts a table of its own.
    void startPseudonyms();
    // Keyed by a 64-bit hash of the text (8 + 4 bytes and the hash's overhead per text, whatever
    // its length).
    using PseudonymTable = QHash<quint64, int>;
    const std::shared_ptr<PseudonymTable> &pseudonyms() const { return m_pseudonyms; }
    void usePseudonyms(std::shared_ptr<PseudonymTable> table) { m_pseudonyms = std::move(table); }

private:
    bool redactJson(Json &json, bool numbers, int depth);
    bool redactPatterns(QString &text);
    QString pseudonym(const QString &text);

    QStringList m_keyNames;                     // lowercase
    std::vector<QRegularExpression> m_patterns;
    std::vector<int> m_patternNumbers;
    RedactionCounts m_counts;
    std::shared_ptr<PseudonymTable> m_pseudonyms = std::make_shared<PseudonymTable>();
};

struct BundlePicture
{
    QString view;       // "topology", "timeline", "agents", ...: a name for people
    QByteArray png;     // the picture, PNG
    int width = 0;      // pixels
    int height = 0;
};

// What a bundle carries beside the trace.
struct IncidentContent
{
    QString note;                       // the operator's words about the incident
    QList<Bookmark> bookmarks;
    QStringList selectedAgents;
    QString selectedMessage;
    QString selectedTask;
    Json alerts = Json::array();        // alertChangeToJson objects, as the window or CLI saw them
    std::vector<BundlePicture> pictures;
    qint64 createdAtMs = 0;             // 0: now
};

// The "bundle" member of a header, read back. Bad members (wrong types, pictures that are not
// base64) are skipped and counted in `damagedMembers`: a bundle opens whatever its header holds.
struct IncidentInfo
{
    IncidentContent content;
    std::optional<qint64> fromMs, toMs;
    QString source;                      // the file name the bundle was cut from
    int keyNamesUsed = 0, patternsUsed = 0;
    qint64 replacements = 0;
    qint64 binaryFramesLeftOut = 0;
    qint64 recordsLeftOutBeforeFrom = 0;
    int damagedMembers = 0;
};
std::optional<IncidentInfo> incidentFromHeader(const Json &header);

struct BundleOptions
{
    std::optional<qint64> fromMs, toMs;   // record times, ms since the epoch; unset: open
    QStringList redactKeyNames;
    QStringList redactPatterns;
    IncidentContent content;
    // Bookmarks outside [from, to] are not taken.
    const std::atomic<bool> *cancel = nullptr;
    std::function<void(qint64 bytesRead, qint64 bytesTotal)> progress; // about every 1 MiB
};

struct BundleResult
{
    enum class Failure { None, BadOptions, InputUnreadable, OutputUnwritable, Cancelled };
    Failure failure = Failure::None;
    QString error;
    qint64 recordsWritten = 0;
    qint64 recordsLeftOutBeforeFrom = 0;   // message traffic before `from` (and its answers)
    RedactionCounts redaction;             // the records': sized as keyNames and patternNumbers
    QStringList keyNames;                  // the key names in effect (BundleRedactor::keyNames)
    std::vector<int> patternNumbers;       // the patterns in effect, by their number in the list given
    qint64 dataReplacements = 0;           // in the bundle's data and the header (note, alerts, url…)
    qint64 bookmarksInRange = 0;
    TraceReadStats stats;                  // what reading the source met
    std::shared_ptr<BundleRedactor::PseudonymTable> pseudonyms; // the records' (rewriteIncidentBundle reuses them)
    qint64 headerReplacements = 0;         // in the source's URL, server and name (first pass)
    int picturesWritten = 0;
    qint64 alertsWritten = 0;
    // Requests and subscriptions of the traffic left out before `from` that were not remembered
    // (past the bounds that keep a hostile trace from growing them: 100,000 and 10,000).
    qint64 contextForgotten = 0;
    bool ok() const { return failure == Failure::None; }
};

// Writes the bundle of `inPath` (any readable trace format) to `outPath` (compression from its
// extension: use .jsonl.zst). An empty `outPath` writes nothing and only counts: the preview.
// On failure or cancel nothing is left at `outPath` (an existing file there stays as it was);
// `outPath` may not be `inPath`. The header's line stays under 14 MiB: pictures that do not fit
// are left out, and the note, bookmarks and alerts are bounded (kMaxBundle*).
BundleResult writeIncidentBundle(const QString &inPath, const QString &outPath, const BundleOptions &options);

// Replaces the bundle data of an existing bundle (e.g. to add pictures drawn from it, or the
// alerts found replaying it) by copying its records unchanged to `outPath` under a new header.
// `first` is the result of the pass that made `inPath`: its counts go into the new header and
// its pseudonyms redact the new data as they redacted the records.
BundleResult rewriteIncidentBundle(const QString &inPath, const QString &outPath, const BundleOptions &options,
                                   const BundleResult &first);

} // namespace mapi
