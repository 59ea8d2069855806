#include "common/Redaction.h"

#include <QRegularExpression>

#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

namespace mapi {

namespace {

constexpr int kMaxNestedJson = 4;      // stringified JSON inside stringified JSON …
constexpr size_t kMaxNameLength = 64;  // longer member names are data, not credential names

// ---- cheap pre-checks ---------------------------------------------------------------------------

// Fragments, in lower case, of every name rule 1 matches (after its separators are dropped the
// name contains one of these as written, with or without a separator inside "api key" etc.).
constexpr std::string_view kNameHints[] = {"credential", "token",      "passw",       "pwd",        "secret",
                                           "authoriz",   "cookie",     "apikey",      "api_key",    "api-key",
                                           "api.key",    "privatekey", "private_key", "private-key", "passphrase",
                                           "bearer",     "sessionkey", "session_key", "session-key"};
// Fragments of what rules 2 and 3 match.
constexpr std::string_view kTextHints[] = {"bearer", "basic", "eyj",  "sk-",  "rk-",  "ghp_",        "gho_",
                                           "ghu_",   "ghs_",  "ghr_", "akia", "asia", "github_pat_", "xox",
                                           "aiza",   "private key", "://"};

constexpr char lowerAscii(char c)
{
    return (c >= 'A' && c <= 'Z') ? char(c + ('a' - 'A')) : c;
}

// The hints' first two bytes, as a 64 Ki-bit table: a frame is scanned once, and only where two
// bytes begin some hint are the hints compared (ASCII case ignored). A lower-case copy of the
// frame and 36 substring searches cost ~5 µs per 560-byte frame on the recording path; with this
// a frame costs ~1.4 µs, most of it the few frames that do hold a hint (docs/benchmarks.md).
class HintTable
{
public:
    HintTable()
    {
        for (std::string_view hint : kNameHints)
            add(hint);
        for (std::string_view hint : kTextHints)
            add(hint);
    }
    bool mayHoldSecrets(const char *text, size_t size) const
    {
        if (size < 2)
            return false;
        unsigned previous = quint8(lowerAscii(text[0]));
        for (size_t i = 1; i < size; ++i) {
            const unsigned current = quint8(lowerAscii(text[i]));
            const unsigned pair = previous << 8 | current;
            previous = current;
            if (!(m_starts[pair >> 6] >> (pair & 63) & 1))
                continue;
            for (std::string_view hint : m_hints)
                if (startsHere(text + i - 1, size - (i - 1), hint))
                    return true;
        }
        return false;
    }

private:
    void add(std::string_view hint)
    {
        const unsigned pair = unsigned(quint8(hint[0])) << 8 | quint8(hint[1]);
        m_starts[pair >> 6] |= quint64(1) << (pair & 63);
        m_hints.push_back(hint);
    }
    static bool startsHere(const char *text, size_t size, std::string_view hint)
    {
        if (hint.size() > size)
            return false;
        for (size_t k = 0; k < hint.size(); ++k)
            if (lowerAscii(text[k]) != hint[k])
                return false;
        return true;
    }
    quint64 m_starts[65536 / 64] = {};
    std::vector<std::string_view> m_hints;
};

bool mayHoldSecrets(const char *text, size_t size)
{
    static const HintTable table;
    return table.mayHoldSecrets(text, size);
}

// ---- the JSON scanner's steps (valid JSON assumed; no recursion) --------------------------------

// Index just past the string literal that starts at `i` (a '"'), or n.
qsizetype endOfString(const char *s, qsizetype i, qsizetype n)
{
    for (++i; i < n; ++i) {
        if (s[i] == '\\')
            ++i;
        else if (s[i] == '"')
            return i + 1;
    }
    return n;
}

qsizetype skipSpace(const char *s, qsizetype i, qsizetype n)
{
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
        ++i;
    return i;
}

// Index just past the JSON value that starts at `i`.
qsizetype endOfValue(const char *s, qsizetype i, qsizetype n)
{
    if (i >= n)
        return n;
    if (s[i] == '"')
        return endOfString(s, i, n);
    if (s[i] == '{' || s[i] == '[') {
        qint64 depth = 0;
        while (i < n) {
            const char c = s[i];
            if (c == '"') {
                i = endOfString(s, i, n);
                continue;
            }
            if (c == '{' || c == '[')
                ++depth;
            else if ((c == '}' || c == ']') && --depth == 0)
                return i + 1;
            ++i;
        }
        return n;
    }
    while (i < n && s[i] != ',' && s[i] != '}' && s[i] != ']' && s[i] != ' ' && s[i] != '\t' && s[i] != '\n'
           && s[i] != '\r')
        ++i;
    return i;
}

bool isLiteral(const char *s, qsizetype size, const char *word)
{
    return size == qsizetype(std::strlen(word)) && std::memcmp(s, word, size_t(size)) == 0;
}

// The text of a JSON string literal (quotes included), or nothing when it is not one.
std::optional<std::string> stringLiteralText(const char *s, qsizetype size)
{
    const Json value = Json::parse(s, s + size, nullptr, false);
    if (!value.is_string())
        return std::nullopt;
    return value.get<std::string>();
}

QByteArray stringLiteral(const QByteArray &text)
{
    return QByteArray::fromStdString(Json(text.toStdString()).dump(-1, ' ', false, Json::error_handler_t::replace));
}

// ---- text rules ---------------------------------------------------------------------------------
// Applied to Latin-1 views of the bytes so that any byte sequence goes through unchanged where no
// rule matches. Every pattern is ASCII; none uses \s (U+0085 and U+00A0 are UTF-8 continuation
// bytes in such a view).

// Replaces each match of `pattern` with what `replace` returns for it (the match itself: keep).
template<typename Replace>
QString replaceMatches(const QString &text, const QRegularExpression &pattern, Replace &&replace)
{
    QString out;
    qsizetype copied = 0;
    QRegularExpressionMatchIterator it = pattern.globalMatch(text);
    while (it.hasNext()) {
        const QRegularExpressionMatch m = it.next();
        const QString replacement = replace(m);
        if (replacement == m.captured(0))
            continue;
        out += QStringView(text).mid(copied, m.capturedStart(0) - copied);
        out += replacement;
        copied = m.capturedEnd(0);
    }
    if (copied == 0)
        return text;
    out += QStringView(text).mid(copied);
    return out;
}

const QString kRedactedText = QStringLiteral("REDACTED");

// A token after "Bearer"/"Basic" has a digit or a symbol: "Bearer instruments" is prose.
bool looksLikeToken(QStringView token)
{
    return std::any_of(token.begin(), token.end(), [](QChar c) {
        return c.isDigit() || c == QLatin1Char('-') || c == QLatin1Char('.') || c == QLatin1Char('_')
            || c == QLatin1Char('~') || c == QLatin1Char('+') || c == QLatin1Char('/') || c == QLatin1Char('=');
    });
}

struct TextPatterns
{
    // Rule 3: shapes of credentials (the whole match is the secret).
    QRegularExpression shapes{QStringLiteral(
        "\\beyJ[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]*"      // JSON Web Token
        "|\\b(?:sk|rk)-(?=[A-Za-z_-]*[0-9])[A-Za-z0-9_-]{16,}"               // sk-…, rk-…
        "|\\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})"    // GitHub
        "|\\b(?:AKIA|ASIA)[0-9A-Z]{16}\\b"                                   // AWS access key id
        "|\\bxox[abposr]-[A-Za-z0-9-]{10,}"                                  // Slack
        "|\\bAIza[0-9A-Za-z_-]{35}"                                          // Google API key
        "|-----BEGIN [A-Z ]*PRIVATE KEY-----(?:.*?-----END [A-Z ]*PRIVATE KEY-----|.*)")}; // PEM
    // Rule 3: the password of a URL's user info.
    QRegularExpression userInfo{QStringLiteral("\\b([A-Za-z][A-Za-z0-9+.-]*://[^/ \\t\\r\\n:@'\"]*):([^@ \\t\\r\\n/'\"]+)@")};
    // Rule 2.
    QRegularExpression scheme{QStringLiteral("\\b(bearer|basic)([ \\t]+)([A-Za-z0-9._~+/-]{8,}=*)"),
                              QRegularExpression::CaseInsensitiveOption};
    // Rule 1 in text: name, separator, value (quoted or up to a delimiter).
    QRegularExpression pair{QStringLiteral("(?<![A-Za-z0-9_.-])([\"']?)([A-Za-z][A-Za-z0-9_.-]{0,63})\\1([ \\t]*[:=][ \\t]*)"
                                           "(\"(?:[^\"\\\\\\n]++|\\\\.)*+\"|'[^'\\n]*+'|[^ \\t\\r\\n,;&}\\])\"'<>]++)")};

    TextPatterns()
    {
        shapes.setPatternOptions(QRegularExpression::DotMatchesEverythingOption);
    }
};

const TextPatterns &patterns()
{
    thread_local const TextPatterns instance; // QRegularExpression objects are not shared across threads
    return instance;
}

QString redactTextRules(const QString &text)
{
    const TextPatterns &p = patterns();
    QString out = replaceMatches(text, p.shapes, [](const QRegularExpressionMatch &) -> QString { return kRedactedText; });
    out = replaceMatches(out, p.userInfo, [](const QRegularExpressionMatch &m) -> QString {
        return m.captured(2) == kRedactedText ? m.captured(0) : m.captured(1) + QLatin1String(":REDACTED@");
    });
    out = replaceMatches(out, p.scheme, [](const QRegularExpressionMatch &m) -> QString {
        return looksLikeToken(m.capturedView(3)) ? m.captured(1) + m.captured(2) + kRedactedText : m.captured(0);
    });
    out = replaceMatches(out, p.pair, [](const QRegularExpressionMatch &m) -> QString {
        const QString name = m.captured(2);
        QStringView value = m.capturedView(4);
        const bool quoted = value.size() >= 2 && (value.front() == QLatin1Char('"') || value.front() == QLatin1Char('\''));
        const QStringView bare = quoted ? value.mid(1, value.size() - 2) : value;
        if (!isSecretName(name.toStdString()) || bare == kRedactedText || bare == QLatin1String("null")
            || bare == QLatin1String("true") || bare == QLatin1String("false")
            || bare.compare(QLatin1String("bearer"), Qt::CaseInsensitive) == 0 // rule 2 took its token
            || bare.compare(QLatin1String("basic"), Qt::CaseInsensitive) == 0)
            return m.captured(0);
        const QString redacted = quoted ? value.front() + kRedactedText + value.back() : kRedactedText;
        return m.captured(1) + name + m.captured(1) + m.captured(3) + redacted;
    });
    return out;
}

QByteArray redactTextBytes(const QByteArray &text)
{
    const QString view = QString::fromLatin1(text);
    const QString out = redactTextRules(view);
    return out.size() == view.size() && out == view ? text : out.toLatin1();
}

QByteArray redactJsonText(const QByteArray &frame, int depth);

// A JSON string value's text: stringified JSON gets every rule, other text rules 1–3.
QByteArray redactStringValue(const QByteArray &text, int depth)
{
    const QByteArray trimmed = text.trimmed();
    if (depth < kMaxNestedJson && !trimmed.isEmpty() && (trimmed.front() == '{' || trimmed.front() == '[')
        && Json::accept(text.constBegin(), text.constEnd()))
        return redactJsonText(text, depth + 1);
    return redactTextBytes(text);
}

// Rules 1–4 on valid JSON text.
QByteArray redactJsonText(const QByteArray &frame, int depth)
{
    const char *s = frame.constData();
    const qsizetype n = frame.size();
    QByteArray out;
    qsizetype copied = 0;
    qsizetype i = 0;
    while (i < n) {
        if (s[i] != '"') {
            ++i;
            continue;
        }
        const qsizetype end = endOfString(s, i, n);
        const qsizetype colon = skipSpace(s, end, n);
        if (colon < n && s[colon] == ':') { // a member name
            std::string_view name(s + i + 1, size_t(std::max<qsizetype>(end - i - 2, 0)));
            std::optional<std::string> unescaped;
            if (name.find('\\') != std::string_view::npos && name.size() <= kMaxNameLength * 6) { // "tok\u0065n" is "token"
                unescaped = stringLiteralText(s + i, end - i);
                if (unescaped)
                    name = *unescaped;
            }
            if (!isSecretName(name)) {
                i = colon + 1;
                continue;
            }
            const qsizetype valueStart = skipSpace(s, colon + 1, n);
            const qsizetype valueEnd = endOfValue(s, valueStart, n);
            const char *value = s + valueStart;
            const qsizetype valueSize = valueEnd - valueStart;
            if (!isLiteral(value, valueSize, "null") && !isLiteral(value, valueSize, "true")
                && !isLiteral(value, valueSize, "false") && !isLiteral(value, valueSize, "\"REDACTED\"")) {
                out.append(s + copied, valueStart - copied);
                out.append("\"REDACTED\"");
                copied = valueEnd;
            }
            i = valueEnd;
            continue;
        }
        // A string value: only one whose text hints at a secret is decoded and checked.
        if (end - i > 2 && mayHoldSecrets(s + i, size_t(end - i))) {
            if (const std::optional<std::string> text = stringLiteralText(s + i, end - i)) {
                const QByteArray before = QByteArray::fromStdString(*text);
                const QByteArray after = redactStringValue(before, depth);
                if (after != before) {
                    out.append(s + copied, i - copied);
                    out.append(stringLiteral(after));
                    copied = end;
                }
            }
        }
        i = end;
    }
    if (copied == 0)
        return frame;
    out.append(s + copied, n - copied);
    return out;
}

} // namespace

bool isSecretName(std::string_view name)
{
    if (name.empty() || name.size() > kMaxNameLength)
        return false;
    char buffer[kMaxNameLength];
    size_t length = 0;
    for (const char c : name) {
        if (c == '_' || c == '-' || c == '.' || c == ' ')
            continue;
        buffer[length++] = (c >= 'A' && c <= 'Z') ? char(c + ('a' - 'A')) : c;
    }
    const std::string_view n(buffer, length);
    static constexpr std::string_view exact[] = {"credential", "credentials", "token",      "password", "passwd",
                                                 "pwd",        "secret",      "authorization", "cookie", "apikey",
                                                 "privatekey", "passphrase",  "bearer",     "sessionkey"};
    static constexpr std::string_view suffixes[] = {"token",      "secret",     "password",    "passwd",
                                                    "apikey",     "privatekey", "credential",  "credentials",
                                                    "passphrase", "authorization", "cookie"};
    for (std::string_view e : exact)
        if (n == e)
            return true;
    for (std::string_view suffix : suffixes)
        if (n.size() > suffix.size() && n.substr(n.size() - suffix.size()) == suffix)
            return true;
    return false;
}

QByteArray redactSecrets(const QByteArray &text)
{
    if (text.isEmpty())
        return text;
    // Cheap pre-check: most frames carry none of the hints (escaped names may hide them).
    if (!mayHoldSecrets(text.constData(), size_t(text.size())) && !text.contains("\\u"))
        return text;
    // nlohmann's acceptor is iterative: any depth is safe.
    if (Json::accept(text.constBegin(), text.constEnd()))
        return redactJsonText(text, 0);
    return redactTextBytes(text);
}

QString redactSecrets(const QString &text)
{
    const QByteArray utf8 = text.toUtf8();
    const QByteArray out = redactSecrets(utf8);
    return out == utf8 ? text : QString::fromUtf8(out);
}

Json redactSecrets(const Json &json)
{
    const QByteArray text = QByteArray::fromStdString(json.dump(-1, ' ', false, Json::error_handler_t::replace));
    const QByteArray out = redactSecrets(text);
    if (out == text)
        return json;
    return Json::parse(out.constBegin(), out.constEnd(), nullptr, false);
}

} // namespace mapi
