#include "common/DeepLink.h"

#include <QDateTime>
#include <QDir>
#include <QList>
#include <QPair>
#include <QRegularExpression>
#include <QStringView>
#include <QTimeZone>
#include <QUrl>
#include <QUrlQuery>

namespace mapi {

namespace {

constexpr qint64 kLatestTimeMs = 253402300799999; // 9999-12-31T23:59:59.999Z

// Part of the operator's own text, quoted in an error: short enough for a message box.
QString quoted(QStringView text)
{
    constexpr int kMax = 60;
    QString out = QLatin1Char('"') + text.left(kMax).toString();
    if (text.size() > kMax)
        out += QChar(0x2026); // …
    return out + QLatin1Char('"');
}

bool isHexDigit(QChar c)
{
    const char16_t u = c.unicode();
    return (u >= '0' && u <= '9') || (u >= 'a' && u <= 'f') || (u >= 'A' && u <= 'F');
}

bool isSlash(QChar c)
{
    return c == QLatin1Char('/') || c == QLatin1Char('\\');
}

// A path on another machine: two slashes of either kind first ("//host/share", "\\host\share",
// "\\?\UNC\…", "/\host"). Windows opens those over SMB and offers the user's credentials to
// the host, so they are refused wherever a local file is expected, on every platform alike.
bool isNetworkPath(QStringView path)
{
    return path.size() >= 2 && isSlash(path[0]) && isSlash(path[1]);
}

// Every '%' starts two hex digits. (QUrlQuery would otherwise take a stray '%' as "%25" in some
// values and stop decoding others.)
bool percentEncodingIsValid(QStringView text)
{
    for (qsizetype i = 0; i < text.size(); ++i) {
        if (text[i] != QLatin1Char('%'))
            continue;
        if (i + 2 >= text.size() || !isHexDigit(text[i + 1]) || !isHexDigit(text[i + 2]))
            return false;
        i += 2;
    }
    return true;
}

ErrorOr<qint64> parseTime(const QString &value)
{
    const auto inRange = [&value](qint64 ms) -> ErrorOr<qint64> {
        if (ms < 0 || ms > kLatestTimeMs)
            return Failure{QStringLiteral("the time t=%1 is not between 1970 and the year 9999").arg(quoted(value))};
        return ms;
    };
    bool digitsOnly = true;
    for (const QChar c : value)
        digitsOnly = digitsOnly && c >= QLatin1Char('0') && c <= QLatin1Char('9');
    if (digitsOnly) {
        bool ok = false;
        const qint64 ms = value.toLongLong(&ok);
        if (!ok || value.size() > 15)
            return inRange(-1);
        return inRange(ms);
    }
    // Without an offset the time is UTC (as for imported logs, trace/TraceImport.cpp): a link
    // means the same instant on every machine that opens it. (Read as UTC directly, so a local
    // daylight-saving gap cannot make it invalid.)
    static const QRegularExpression offset(QStringLiteral("[T ]\\d.*(Z|[+-]\\d\\d:?\\d\\d)$"),
                                           QRegularExpression::CaseInsensitiveOption);
    const bool hasOffset = offset.match(value).hasMatch();
    QDateTime dt = QDateTime::fromString(hasOffset ? value : QString(value + QLatin1Char('Z')), Qt::ISODateWithMs);
    if (!dt.isValid() && !hasOffset) { // a date alone, say
        dt = QDateTime::fromString(value, Qt::ISODateWithMs);
        if (dt.isValid())
            dt = QDateTime(dt.date(), dt.time(), QTimeZone::utc());
    }
    if (!dt.isValid())
        return Failure{QStringLiteral("t=%1 is not a time: it must be epoch milliseconds or an ISO 8601 time such as "
                                      "2026-11-26T15:00:00.123Z")
                           .arg(quoted(value))};
    return inRange(dt.toMSecsSinceEpoch());
}

QString percentEncoded(const QString &value, const QByteArray &keep = QByteArray())
{
    return QString::fromLatin1(QUrl::toPercentEncoding(value, keep));
}

} // namespace

ErrorOr<DeepLink> parseDeepLink(const QString &text)
{
    if (text.size() > kMaxDeepLinkLength)
        return Failure{QStringLiteral("the link is %1 characters long; at most %2 are accepted")
                           .arg(text.size())
                           .arg(kMaxDeepLinkLength)};
    const QStringView link = QStringView(text).trimmed();

    // map-inspector: (any case), then an optional "//".
    const qsizetype colon = link.indexOf(QLatin1Char(':'));
    const QStringView scheme = colon < 0 ? QStringView() : link.left(colon);
    if (scheme.compare(QLatin1String("map-inspector"), Qt::CaseInsensitive) != 0)
        return Failure{QStringLiteral("not a MAP Inspector link: it must start with map-inspector://, not %1")
                           .arg(quoted(colon < 0 ? link.left(20) : link.left(colon + 1)))};
    QStringView rest = link.mid(colon + 1);
    if (rest.startsWith(QLatin1String("//")))
        rest = rest.mid(2);
    if (rest.contains(QLatin1Char('#')))
        return Failure{QStringLiteral("the link has a '#' (a fragment); a '#' in a path or id must be written %23")};

    // The action: "open" (any case), optionally followed by '/'.
    const qsizetype question = rest.indexOf(QLatin1Char('?'));
    QStringView action = question < 0 ? rest : rest.left(question);
    const QStringView query = question < 0 ? QStringView() : rest.mid(question + 1);
    if (action.endsWith(QLatin1Char('/')))
        action.chop(1);
    if (action.isEmpty())
        return Failure{QStringLiteral("the link names no action; it must start with map-inspector://open?")};
    if (action.compare(QLatin1String("open"), Qt::CaseInsensitive) != 0)
        return Failure{QStringLiteral("unknown action %1 in the link; the only one is \"open\"").arg(quoted(action))};

    if (!percentEncodingIsValid(query))
        return Failure{QStringLiteral("the link is badly percent-encoded: a '%' must start two hex digits (%25 for '%' itself)")};

    // The values. Items come in the order written; PrettyDecoded keeps bytes that are not UTF-8
    // encoded (FullyDecoded makes them U+FFFD), which tells a bad encoding from a real U+FFFD.
    const QUrlQuery items(query.toString());
    const QList<QPair<QString, QString>> decoded = items.queryItems(QUrl::FullyDecoded);
    const QList<QPair<QString, QString>> pretty = items.queryItems(QUrl::PrettyDecoded);
    const QLatin1String keys[] = {QLatin1String("file"), QLatin1String("t"), QLatin1String("agent"),
                                  QLatin1String("message")};
    QString values[4];
    bool seen[4] = {false, false, false, false};
    for (qsizetype i = 0; i < decoded.size(); ++i) {
        const QString &key = decoded[i].first;
        for (int k = 0; k < 4; ++k) {
            if (key != keys[k])
                continue;
            if (seen[k])
                return Failure{QStringLiteral("\"%1\" is given twice in the link").arg(keys[k])};
            seen[k] = true;
            const QString &value = decoded[i].second;
            if (value.contains(QChar(0)))
                return Failure{QStringLiteral("the link's \"%1\" holds a NUL character").arg(keys[k])};
            if (value.contains(QChar(QChar::ReplacementCharacter)) && i < pretty.size()
                && !pretty[i].second.contains(QChar(QChar::ReplacementCharacter)))
                return Failure{QStringLiteral("the link's \"%1\" is not UTF-8 once decoded").arg(keys[k])};
            values[k] = value;
        }
        // Other keys: ignored (links of later versions may carry more).
    }

    DeepLink out;
    out.file = values[0];
    if (out.file.isEmpty())
        return Failure{QStringLiteral("the link names no file (map-inspector://open?file=/path/to/trace.jsonl.zst)")};
    if (isNetworkPath(out.file))
        return Failure{QStringLiteral("the link's file %1 is on the network; a link may only open a local file")
                           .arg(quoted(out.file))};
    if (out.file.startsWith(QLatin1Char(':')) || !QDir::isAbsolutePath(out.file))
        return Failure{QStringLiteral("the link's file %1 is not an absolute path").arg(quoted(out.file))};
    if (!values[1].isEmpty()) {
        const ErrorOr<qint64> t = parseTime(values[1]);
        if (!t)
            return Failure{t.error()};
        out.timeMs = *t;
    }
    out.agentId = values[2];
    out.messageId = values[3];
    return out;
}

QString makeDeepLink(const DeepLink &link)
{
    QString out = QStringLiteral("map-inspector://open?file=") + percentEncoded(link.file, QByteArrayLiteral("/"));
    if (link.timeMs)
        out += QStringLiteral("&t=") + QString::number(*link.timeMs);
    if (!link.agentId.isEmpty())
        out += QStringLiteral("&agent=") + percentEncoded(link.agentId);
    if (!link.messageId.isEmpty())
        out += QStringLiteral("&message=") + percentEncoded(link.messageId);
    return out;
}

bool isDeepLink(const QString &arg)
{
    return QStringView(arg).trimmed().startsWith(QLatin1String("map-inspector:"), Qt::CaseInsensitive);
}

ErrorOr<QString> localPathFromArgument(const QString &arg)
{
    QString path = arg;
    if (arg.startsWith(QLatin1String("file://"), Qt::CaseInsensitive)) {
        QUrl url(arg);
        if (!url.isValid() || !url.isLocalFile())
            return Failure{QStringLiteral("%1 is not a valid file URL").arg(quoted(arg))};
        // file://host/share/x names a file on another machine: QUrl::toLocalFile() would make it
        // the UNC path //host/share/x. "localhost" is this machine (RFC 8089), read as no host.
        const QString host = url.host();
        if (!host.isEmpty() && host.compare(QLatin1String("localhost"), Qt::CaseInsensitive) != 0)
            return Failure{QStringLiteral("%1 names a file on the network host %2; only a local file is opened")
                               .arg(quoted(arg), quoted(host))};
        url.setHost(QString());
        path = url.toLocalFile();
        if (path.isEmpty())
            return Failure{QStringLiteral("%1 names no file").arg(quoted(arg))};
    }
    if (isNetworkPath(path))
        return Failure{QStringLiteral("%1 is a network path; only a local file is opened").arg(quoted(path))};
    if (path.contains(QChar(0)))
        return Failure{QStringLiteral("the file name %1 holds a NUL character").arg(quoted(path))};
    return path;
}

QString localFileFromArgument(const QString &arg)
{
    ErrorOr<QString> path = localPathFromArgument(arg);
    return path ? std::move(path).value() : QString();
}

} // namespace mapi
