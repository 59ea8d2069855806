#include "common/Redaction.h"

#include <QRegularExpression>

#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

namespace mapi {

namespace {

constexpr int kMaxNestedJson = 4;       // stringified JSON inside stringified JSON …
constexpr size_t kMaxNameLength = 256;  // longer member names are data, not credential names (and
                                        // bound the work per name: isSecretName, the text rules)

// ---- cheap pre-checks ---------------------------------------------------------------------------

// Fragments, in lower case, of every name rule 1 matches (after its separators are dropped the
// name contains one of these as written, with or without a separator inside "api key" etc.).
constexpr std::string_view kNameHints[] = {"credential", "token",      "passw",       "pwd",        "secret",
                                           "authoriz",   "cookie",     "apikey",      "api_key",    "api-key",
                                           "api.key",    "privatekey", "private_key", "private-key", "passphrase",
                                           "bearer",     "sessionkey", "session_key", "session-key", "accesskey",
                                           "access_key", "access-key"};
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

// An escaped name ("tok\u0065n" is "token") hides every hint: text with a \u escape is checked too.
bool mayHoldEscapedName(const char *text, size_t size)
{
    return std::string_view(text, size).find("\\u") != std::string_view::npos;
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

// Whether the string literal s[start, end) (quotes included), read as JSON reads it, names a
// secret: "tok\u0065n" is "token".
bool literalNamesSecret(const char *s, qsizetype start, qsizetype end)
{
    const std::string_view name(s + start + 1, size_t(std::max<qsizetype>(end - start - 2, 0)));
    if (name.find('\\') == std::string_view::npos || name.size() > kMaxNameLength * 6)
        return isSecretName(name);
    const std::optional<std::string> unescaped = stringLiteralText(s + start, end - start);
    return isSecretName(unescaped ? std::string_view(*unescaped) : name);
}

// Where the string that pairs with the string literal s[start, end) begins, or -1: the two are
// elements of an array (a comma between them, no ':' after the second, so the second names no
// member) and the first names a secret. A header list, [["X-Api-Key", "k-123"], …] or
// ["Authorization", "Token …"], loses the value: nothing else says it is a credential.
qsizetype pairedSecretString(const char *s, qsizetype start, qsizetype end, qsizetype n)
{
    const qsizetype comma = skipSpace(s, end, n);
    if (comma >= n || s[comma] != ',')
        return -1;
    const qsizetype next = skipSpace(s, comma + 1, n);
    if (next >= n || s[next] != '"')
        return -1;
    const qsizetype after = skipSpace(s, endOfString(s, next, n), n);
    if (after < n && s[after] == ':')
        return -1;
    return literalNamesSecret(s, start, end) ? next : -1;
}

// ---- text rules ---------------------------------------------------------------------------------
// Applied to Latin-1 views of the bytes so that any byte sequence goes through unchanged where no
// rule matches. Every pattern is ASCII; none uses \s (U+0085 and U+00A0 are UTF-8 continuation
// bytes in such a view). Every repetition is possessive, bounded or both, so that a failed attempt
// does not backtrack: the work is about linear in the text.

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

// A name found in text as the JSON it sits in would read it: "tok\u0065n" is "token", with any
// number of backslashes before the u (one more level of escaping per stringification). What is
// not ASCII becomes '?' (no credential name has it). The pattern bounds the name's length.
std::string decodedName(QStringView name)
{
    std::string out;
    out.reserve(size_t(name.size()));
    for (qsizetype i = 0; i < name.size(); ++i) {
        if (name[i] == QLatin1Char('\\')) {
            qsizetype u = i;
            while (u < name.size() && name[u] == QLatin1Char('\\'))
                ++u;
            bool ok = false;
            const bool escape = u + 5 <= name.size() && name[u] == QLatin1Char('u');
            const uint code = escape ? name.mid(u + 1, 4).toUInt(&ok, 16) : 0;
            if (ok) {
                out += code < 0x80 ? char(code) : '?';
                i = u + 4;
                continue;
            }
        }
        const char16_t c = name[i].unicode();
        out += c < 0x80 ? char(c) : '?';
    }
    return out;
}

// "Proxy-Authorization", "authorization": every word of such a header's value after the scheme is
// the credential, whatever the scheme ("Token", "Digest", "AWS4-HMAC-SHA256" …).
bool endsWithAuthorization(std::string_view name)
{
    constexpr std::string_view word = "authorization";
    size_t k = word.size();
    for (size_t i = name.size(); i-- > 0 && k > 0;) {
        const char c = lowerAscii(name[i]);
        if (c == '_' || c == '-' || c == '.' || c == ' ')
            continue;
        if (c != word[--k])
            return false;
    }
    return k == 0;
}

// Scheme words that can lead a credential under any secret name ("api_key: Token abc").
bool isSchemeWord(QStringView word)
{
    static constexpr const char *schemes[] = {"bearer", "basic", "token",  "digest", "negotiate", "ntlm",   "apikey",
                                              "api-key", "key",  "jwt",    "oauth",  "dpop",      "ssws",   "sharedkey",
                                              "aws4-hmac-sha256"};
    return std::any_of(std::begin(schemes), std::end(schemes),
                       [word](const char *scheme) {
                           return word.compare(QLatin1String(scheme), Qt::CaseInsensitive) == 0;
                       });
}

// A word that can be a scheme: a letter, then up to 31 letters, digits, '_' or '-'.
bool isWord(QStringView text)
{
    if (text.isEmpty() || text.size() > 32 || !(text.front().isLetter() && text.front().unicode() < 0x80))
        return false;
    return std::all_of(text.begin(), text.end(), [](QChar c) {
        return c.unicode() < 0x80 && (c.isLetterOrNumber() || c == QLatin1Char('_') || c == QLatin1Char('-'));
    });
}

bool isQuote(QChar c)
{
    return c == QLatin1Char('"') || c == QLatin1Char('\'');
}

qsizetype endOfRun(QStringView t, qsizetype i) // past the backslashes that start at i
{
    while (i < t.size() && t[i] == QLatin1Char('\\'))
        ++i;
    return i;
}

// The end of a value that is not quoted, starting at `i`: a delimiter, a quote, or a run of
// backslashes before a quote (that quote's escape in stringified JSON, not part of the value).
qsizetype endOfBareValue(QStringView t, qsizetype i)
{
    static const QLatin1String delimiters(" \t\r\n,;&}])\"'<>");
    while (i < t.size()) {
        if (t[i] == QLatin1Char('\\')) {
            const qsizetype run = endOfRun(t, i);
            if (run < t.size() && isQuote(t[run]))
                return i;
            i = run;
        } else if (delimiters.contains(t[i])) {
            return i;
        } else {
            ++i;
        }
    }
    return i;
}

// The end of the text of a quoted value that starts at `i`, quoted by `quote` behind `run`
// backslashes (0 in plain text, 1 in JSON stringified once, 3 twice …), or -1 when it does not
// close on its line. Without escaping, an even run of backslashes before the quote ends it
// (escaped backslashes); escaped, a run no longer than `run` does and a longer one is a quote
// inside the text.
qsizetype endOfQuotedText(QStringView t, qsizetype i, qsizetype run, QChar quote)
{
    while (i < t.size()) {
        const QChar c = t[i];
        if (c == QLatin1Char('\r') || c == QLatin1Char('\n'))
            return -1;
        if (c != QLatin1Char('\\') && c != quote) {
            ++i;
            continue;
        }
        const qsizetype end = endOfRun(t, i);
        if (end < t.size() && t[end] == quote) {
            if (run == 0 ? (end - i) % 2 == 0 : end - i <= run)
                return run == 0 ? end : i;
            i = end + 1;
        } else {
            i = end;
        }
    }
    return -1;
}

// Just past the run of backslashes and the quote that close a quoted text ending at `i`.
qsizetype pastClosingQuote(QStringView t, qsizetype i, QChar quote)
{
    i = endOfRun(t, i);
    return i < t.size() && t[i] == quote ? i + 1 : i;
}

struct Span
{
    qsizetype start = -1;
    qsizetype end = -1;
};

// What goes of the value that starts at `v`, after a secret's name and its separator; nothing
// (start -1) when the value says no secret (null, a boolean, REDACTED already), is a structure
// ("credentials": {…}: its members are checked one by one) or, for a pair of strings, is missing.
Span secretValue(QStringView t, qsizetype v, bool pairOfStrings, std::string_view name)
{
    const qsizetype n = t.size();
    if (v >= n || t[v] == QLatin1Char('{') || t[v] == QLatin1Char('['))
        return {};
    // A quoted value, escaped or not: its text goes, its quotes stay.
    const qsizetype quoteAt = std::min(endOfRun(t, v), v + 16);
    if (quoteAt < n && isQuote(t[quoteAt])) {
        const qsizetype start = quoteAt + 1;
        const qsizetype end = endOfQuotedText(t, start, quoteAt - v, t[quoteAt]);
        // A value that does not close (a frame cut inside a secret) goes to the end of the text:
        // where it would end cannot be told, and the part before the cut is part of the secret.
        if (end < 0)
            return {start, n};
        qsizetype after = pastClosingQuote(t, end, t[quoteAt]);
        while (after < n && (t[after] == QLatin1Char(' ') || t[after] == QLatin1Char('\t')))
            ++after;
        if ((pairOfStrings && after < n && t[after] == QLatin1Char(':')) // ["a", "b": …]: "b" names a member
            || t.mid(start, end - start) == kRedactedText)
            return {};
        return {start, end};
    }
    if (pairOfStrings)
        return {};
    const qsizetype end = endOfBareValue(t, v);
    const QStringView value = t.mid(v, end - v);
    if (value.isEmpty() || value == kRedactedText || value == QLatin1String("null") || value == QLatin1String("true")
        || value == QLatin1String("false"))
        return {};
    // Rule 2 after a name: "Authorization: Token abc" loses "abc", whatever the scheme word; under
    // another secret name only after a known scheme ("api_key: Token abc").
    qsizetype credential = end;
    while (credential < n && (t[credential] == QLatin1Char(' ') || t[credential] == QLatin1Char('\t')))
        ++credential;
    const qsizetype credentialEnd = credential > end ? endOfBareValue(t, credential) : credential;
    if (credentialEnd > credential && isWord(value) && (endsWithAuthorization(name) || isSchemeWord(value)))
        return t.mid(credential, credentialEnd - credential) == kRedactedText ? Span{}
                                                                              : Span{credential, credentialEnd};
    if (value.compare(QLatin1String("bearer"), Qt::CaseInsensitive) == 0 // rule 2 took its token, or there is none
        || value.compare(QLatin1String("basic"), Qt::CaseInsensitive) == 0)
        return {};
    return {v, end};
}

// Pieces of the patterns (PCRE). A name: a letter, then up to 255 name characters; any of them may
// be a \u escape (four hex digits) behind a run of backslashes: "tok\u0065n", and "tok\\u0065n" one
// level of stringification deeper. Possessive: a name is never given back piece by piece when what
// follows does not match.
constexpr const char kName[] =
    R"re((?:[A-Za-z]|\\{1,16}u[0-9A-Fa-f]{4})(?:[A-Za-z0-9_.-]|\\{1,16}u[0-9A-Fa-f]{4}){0,255}+)re";
// Nothing of a name (or an escape) just before: a name starts here, not inside another word.
constexpr const char kNameStart[] = R"re((?<![A-Za-z0-9_.\\-]))re";

QRegularExpression compilePattern(std::initializer_list<const char *> pieces,
                                  QRegularExpression::PatternOptions options = QRegularExpression::NoPatternOption)
{
    QString text;
    for (const char *piece : pieces)
        text += QLatin1String(piece);
    QRegularExpression re(text, options);
    re.optimize();
    return re;
}

struct TextPatterns
{
    // Rule 3: shapes of credentials (the whole match is the secret).
    QRegularExpression shapes = compilePattern(
        {R"re(\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*)re"              // JSON Web Token
         R"re(|\b(?:sk|rk)-(?=[A-Za-z_-]*[0-9])[A-Za-z0-9_-]{16,})re"                     // sk-…, rk-…
         R"re(|\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}))re"          // GitHub
         R"re(|\b(?:AKIA|ASIA)[0-9A-Z]{16}\b)re"                                          // AWS access key id
         R"re(|\bxox[abposr]-[A-Za-z0-9-]{10,})re"                                        // Slack
         R"re(|\bAIza[0-9A-Za-z_-]{35})re"                                                // Google API key
         R"re(|-----BEGIN [A-Z ]*PRIVATE KEY-----(?:.*?-----END [A-Z ]*PRIVATE KEY-----|.*))re"}, // PEM
        QRegularExpression::DotMatchesEverythingOption);
    // Rule 3: the password of a URL's user info.
    QRegularExpression userInfo =
        compilePattern({R"re(\b([A-Za-z][A-Za-z0-9+.-]*://[^/ \t\r\n:@'"]*+):([^@ \t\r\n/'"]++)@)re"});
    // Rule 2, anywhere.
    // The token is RFC 6750's b64token, and what follows a '=' inside it too: a token that breaks
    // the syntax goes whole, not its tail left beside REDACTED (found by fuzz_operator_inputs).
    QRegularExpression scheme = compilePattern({R"re(\b(bearer|basic)([ \t]+)([A-Za-z0-9._~+/-]{8,}+(?:=++[A-Za-z0-9._~+/-]++)*+=*+))re"},
                                               QRegularExpression::CaseInsensitiveOption);
    // Rule 1 in text: a name and its separator; secretValue() reads the value. The name is bare
    // (password=…, X-Api-Key: …) or quoted at any level of escaping: "api_key": …, \"api_key\": …
    // and \\\"api_key\\\": … (stringified twice: a frame that does not parse still holds it), or
    // the first of a pair of strings, ["X-Api-Key", …], ('x-auth-token', …). Groups: 1 the run of
    // backslashes before the quote, 2 the quote (the same run and quote close the name), 3 the
    // name, 4 the separator. Bounded (a name is at most 256 pieces) and possessive: no backtracking.
    QRegularExpression nameHead = compilePattern({kNameStart, R"re((?:(\\{0,16}+)(["']))?()re", kName,
                                                  R"re()(?(2)\1\2)([ \t]*+[:=,][ \t]*+))re"});
};

const TextPatterns &patterns()
{
    thread_local const TextPatterns instance; // QRegularExpression objects are not shared across threads
    return instance;
}

// Rule 1 (and rule 2 after a name) on text. Each name is read once: when it is no secret's, the
// search goes on right after its separator, so a pair inside its value ("note": "password=x",
// stringified JSON inside stringified JSON) is the next one found, and no value is read twice.
QString redactNamedValues(const QString &text)
{
    const QStringView t(text);
    const QRegularExpression &head = patterns().nameHead;
    QString out;
    qsizetype copied = 0;
    qsizetype from = 0;
    while (from < t.size()) {
        // A Latin-1 view is valid UTF-16: PCRE's check of the whole text on every call (this loop
        // calls once per name) would make it quadratic.
        const QRegularExpressionMatch m = head.match(text, from, QRegularExpression::NormalMatch,
                                                     QRegularExpression::DontCheckSubjectStringMatchOption);
        if (!m.hasMatch())
            break;
        from = m.capturedEnd(0);
        const bool pairOfStrings = m.capturedView(4).contains(QLatin1Char(','));
        if (pairOfStrings && m.capturedStart(2) < 0) // "enter your password, then …" is prose
            continue;
        const std::string name = decodedName(m.capturedView(3));
        if (!isSecretName(name))
            continue;
        const Span secret = secretValue(t, m.capturedEnd(0), pairOfStrings, name);
        if (secret.start < 0)
            continue;
        out += t.mid(copied, secret.start - copied);
        out += kRedactedText;
        copied = secret.end;
        from = std::max(from, secret.end);
    }
    if (copied == 0)
        return text;
    out += t.mid(copied);
    return out;
}

QString redactTextPass(const QString &text)
{
    const TextPatterns &p = patterns();
    QString out = replaceMatches(text, p.shapes, [](const QRegularExpressionMatch &) { return kRedactedText; });
    out = replaceMatches(out, p.userInfo, [](const QRegularExpressionMatch &m) -> QString {
        return m.captured(2) == kRedactedText ? m.captured(0) : m.captured(1) + QLatin1String(":REDACTED@");
    });
    out = replaceMatches(out, p.scheme, [](const QRegularExpressionMatch &m) -> QString {
        return looksLikeToken(m.capturedView(3)) ? m.captured(1) + m.captured(2) + kRedactedText : m.captured(0);
    });
    return redactNamedValues(out);
}

// The text rules until a pass changes nothing (at most kMaxTextPasses; each only puts REDACTED in
// place of text that is not REDACTED, so they settle; a text without a secret takes one pass).
// One pass can leave a value the next one takes: where escaping levels mix,
// ["X-Api-Key","k-… {\"api_key\":"…] reads the header's value as a member's name until the
// escaped api_key's value is gone. Redacting the output again then changes nothing.
constexpr int kMaxTextPasses = 8;

QString redactTextRules(const QString &text)
{
    QString out = redactTextPass(text);
    for (int pass = 1; pass < kMaxTextPasses && !out.isSharedWith(text); ++pass) {
        QString again = redactTextPass(out);
        if (again.isSharedWith(out) || again == out)
            break;
        out = std::move(again);
    }
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

// Replaces the JSON value s[start, end) with "REDACTED" unless it is null, a boolean or that already.
void redactValue(const char *s, qsizetype start, qsizetype end, QByteArray &out, qsizetype &copied)
{
    const char *value = s + start;
    const qsizetype size = end - start;
    if (isLiteral(value, size, "null") || isLiteral(value, size, "true") || isLiteral(value, size, "false")
        || isLiteral(value, size, "\"REDACTED\""))
        return;
    out.append(s + copied, start - copied);
    out.append("\"REDACTED\"");
    copied = end;
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
            if (!literalNamesSecret(s, i, end)) {
                i = colon + 1;
                continue;
            }
            const qsizetype valueStart = skipSpace(s, colon + 1, n);
            const qsizetype valueEnd = endOfValue(s, valueStart, n);
            redactValue(s, valueStart, valueEnd, out, copied);
            i = valueEnd;
            continue;
        }
        // A string value: the second of a pair that names a secret goes ([…, "X-Api-Key", "k-1"]).
        if (const qsizetype paired = pairedSecretString(s, i, end, n); paired >= 0) {
            const qsizetype pairedEnd = endOfString(s, paired, n);
            redactValue(s, paired, pairedEnd, out, copied);
            i = pairedEnd;
            continue;
        }
        // Other string values: only one whose text hints at a secret is decoded and checked.
        if (end - i > 2 && (mayHoldSecrets(s + i, size_t(end - i)) || mayHoldEscapedName(s + i, size_t(end - i)))) {
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

bool equalsIgnoringCase(std::string_view word, std::string_view lower)
{
    return word.size() == lower.size()
        && std::equal(word.begin(), word.end(), lower.begin(), [](char a, char b) { return lowerAscii(a) == b; });
}

template<size_t N>
bool isOneOf(std::string_view word, const std::string_view (&lowerWords)[N])
{
    return std::any_of(std::begin(lowerWords), std::end(lowerWords),
                       [word](std::string_view w) { return equalsIgnoringCase(word, w); });
}

// Rule 1, second part: names made of words joined by '_', '-' or '.' (environment variables,
// headers, settings keys) that hold a secret's word anywhere, not only at the end:
// AWS_SECRET_ACCESS_KEY, SECRET_KEY_BASE, db-password-new, PRIVATE_KEY_PEM. "token" counts in
// upper-case names only (GITHUB_TOKEN_V2): in lower case, token_budget, token_count are counters.
// A name whose last word says what it is about (…_FILE, …_URL, …_ID, …_LENGTH, …_TYPE) is not
// the secret itself: DB_PASSWORD_FILE=/run/secrets/db, AWS_ACCESS_KEY_ID, password_min_length.
bool hasSecretWord(std::string_view name)
{
    static constexpr std::string_view secretWords[] = {"secret",     "secrets",     "password", "passwd", "passphrase",
                                                       "credential", "credentials", "apikey",   "privatekey"};
    static constexpr std::string_view keyKinds[] = {"api", "access", "private", "secret"}; // …_KEY
    static constexpr std::string_view aboutWords[] = {"type",  "types",  "count",  "limit", "used",  "usage",
                                                      "budget", "url",   "uri",    "endpoint", "file", "path",
                                                      "ttl",   "expiry", "expires", "length", "size", "id", "name"};
    if (name.find_first_of("_-.") == std::string_view::npos // one word: the exact and suffix rules decide
        || name.find(' ') != std::string_view::npos)        // prose, not a name
        return false;
    const bool upperCase = std::none_of(name.begin(), name.end(), [](char c) { return c >= 'a' && c <= 'z'; });
    std::string_view previous;
    std::string_view word;
    size_t words = 0;
    bool found = false;
    size_t start = 0;
    for (size_t i = 0; i <= name.size(); ++i) {
        if (i < name.size() && name[i] != '_' && name[i] != '-' && name[i] != '.')
            continue;
        if (i > start) {
            previous = word;
            word = name.substr(start, i - start);
            ++words;
            found = found || isOneOf(word, secretWords) || (upperCase && equalsIgnoringCase(word, "token"))
                || (equalsIgnoringCase(word, "key") && isOneOf(previous, keyKinds));
        }
        start = i + 1;
    }
    return found && words > 1 && !isOneOf(word, aboutWords);
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
        buffer[length++] = lowerAscii(c);
    }
    const std::string_view n(buffer, length);
    static constexpr std::string_view exact[] = {"credential", "credentials", "token",      "password",  "passwd",
                                                 "pwd",        "secret",      "authorization", "cookie", "apikey",
                                                 "privatekey", "passphrase",  "bearer",     "sessionkey", "secretkey",
                                                 "accesskey"};
    static constexpr std::string_view suffixes[] = {"token",      "secret",     "password",    "passwd",
                                                    "apikey",     "privatekey", "credential",  "credentials",
                                                    "passphrase", "authorization", "cookie",   "secretkey",
                                                    "accesskey"};
    for (std::string_view e : exact)
        if (n == e)
            return true;
    for (std::string_view suffix : suffixes)
        if (n.size() > suffix.size() && n.substr(n.size() - suffix.size()) == suffix)
            return true;
    return hasSecretWord(name);
}

QByteArray redactSecrets(const QByteArray &text)
{
    if (text.isEmpty())
        return text;
    // Cheap pre-check: most frames carry none of the hints (escaped names may hide them).
    const size_t size = size_t(text.size());
    if (!mayHoldSecrets(text.constData(), size) && !mayHoldEscapedName(text.constData(), size))
        return text;
    // nlohmann's acceptor is iterative: any depth is safe. A frame it rejects (truncated, binary)
    // gets the text rules, which read quoted names at any level of escaping.
    if (Json::accept(text.constBegin(), text.constEnd()))
        return redactJsonText(text, 0);
    return redactTextBytes(text);
}

bool mayNeedRedaction(QByteArrayView text)
{
    const size_t size = size_t(text.size());
    return size > 0 && (mayHoldSecrets(text.data(), size) || mayHoldEscapedName(text.data(), size));
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
