#include "models/AgentFilter.h"

#include "model/SystemStore.h"
#include "models/AgentTableModel.h"

#include <QCoreApplication>

namespace mapi::ui {

namespace {

QString tr(const char *text)
{
    return QCoreApplication::translate("AgentFilter", text);
}

struct KeyInfo
{
    const char *name;
    AgentFilter::Field field;
};

// Documentation order (docs/filter-language.md lists them the same way).
constexpr KeyInfo kKeys[] = {
    {"name", AgentFilter::Field::Name},       {"role", AgentFilter::Field::Role},
    {"state", AgentFilter::Field::State},     {"health", AgentFilter::Field::Health},
    {"scope", AgentFilter::Field::Scope},     {"parent", AgentFilter::Field::Parent},
    {"id", AgentFilter::Field::Id},           {"task", AgentFilter::Field::Task},
    {"session", AgentFilter::Field::Session}, {"is", AgentFilter::Field::Is},
    {"system", AgentFilter::Field::System},
};

const QStringList &healthNames()
{
    static const QStringList names = [] {
        QStringList out;
        for (Health h : {Health::Healthy, Health::Late, Health::Unresponsive, Health::Suspended, Health::Disconnected,
                         Health::Stopped, Health::Failed, Health::Unknown})
            out << healthName(h);
        return out;
    }();
    return names;
}

const QStringList &isValues()
{
    static const QStringList values = {QStringLiteral("departed"), QStringLiteral("placeholder")};
    return values;
}

// One whitespace-separated word of the query, quotes resolved.
struct Token
{
    QString text;          // without the leading '-' and without quote characters
    int position = 0;      // where the token starts in the query (at the '-' if negated)
    int textPosition = 0;  // where `text` starts in the query
    bool negated = false;
    bool quoted = false;   // some part was inside quotes
    int colon = -1;        // index in `text` of the first colon outside quotes and before any quote
    int firstQuoted = -1;  // index in `text` of the first character that came from inside quotes
};

struct Tokens
{
    std::vector<Token> tokens;
    QString error;
    int errorPosition = -1;
};

Tokens tokenize(const QString &query)
{
    Tokens out;
    const int n = int(query.size());
    int i = 0;
    auto fail = [&out](const QString &message, int position) {
        out.error = message;
        out.errorPosition = position;
        return out;
    };
    while (i < n) {
        while (i < n && query.at(i).isSpace())
            ++i;
        if (i >= n)
            break;
        Token token;
        token.position = i;
        if (query.at(i) == QLatin1Char('-')) {
            token.negated = true;
            ++i;
            if (i >= n || query.at(i).isSpace())
                return fail(tr("'-' must be followed by a term, as in -state:stopped"), token.position);
        }
        token.textPosition = i;
        // A term opening with a parenthesis is an attempt at grouping (inside a value, as in
        // name:~^(a|b)$, parentheses are ordinary characters).
        if (query.at(i) == QLatin1Char('('))
            return fail(tr("Parentheses are not supported: OR already binds tighter than the space (AND); "
                           "quote the word to search for a parenthesis"),
                        i);
        while (i < n && !query.at(i).isSpace()) {
            const QChar c = query.at(i);
            if (c == QLatin1Char('"')) {
                const int open = i++;
                bool closed = false;
                if (token.firstQuoted < 0)
                    token.firstQuoted = int(token.text.size());
                token.quoted = true;
                while (i < n) {
                    const QChar q = query.at(i);
                    if (q == QLatin1Char('\\') && i + 1 < n) {
                        token.text += query.at(i + 1);
                        i += 2;
                        continue;
                    }
                    ++i;
                    if (q == QLatin1Char('"')) {
                        closed = true;
                        break;
                    }
                    token.text += q;
                }
                if (!closed)
                    return fail(tr("Unterminated quote: add the closing \""), open);
                continue;
            }
            if (c == QLatin1Char(':') && token.colon < 0 && !token.quoted)
                token.colon = int(token.text.size());
            token.text += c;
            ++i;
        }
        out.tokens.push_back(std::move(token));
    }
    return out;
}

bool isOrOperator(const Token &token)
{
    return !token.negated && !token.quoted && token.text == QLatin1String("OR");
}

bool containsText(const QString &haystack, const QString &needle)
{
    return haystack.contains(needle, Qt::CaseInsensitive);
}

bool equalsText(const QString &a, const QString &b)
{
    return a.compare(b, Qt::CaseInsensitive) == 0;
}

} // namespace

QStringList AgentFilter::keys()
{
    QStringList out;
    for (const KeyInfo &k : kKeys)
        out << QLatin1String(k.name);
    return out;
}

QString AgentFilter::quoted(const QString &value)
{
    static const QRegularExpression special(QStringLiteral("[\\s\"\\\\]"));
    if (!value.isEmpty() && !value.startsWith(u'~') && !value.contains(special))
        return value;
    QString text = value;
    text.replace(u'\\', QStringLiteral("\\\\")).replace(u'"', QStringLiteral("\\\""));
    return u'"' + text + u'"';
}

QString AgentFilter::exactly(const QString &value)
{
    const QString pattern = u'^' + QRegularExpression::escape(value) + u'$';
    static const QRegularExpression special(QStringLiteral("[\\s\"]"));
    if (!pattern.contains(special))
        return u'~' + pattern; // outside quotes a backslash is an ordinary character
    QString text = pattern;
    text.replace(u'\\', QStringLiteral("\\\\")).replace(u'"', QStringLiteral("\\\""));
    return QStringLiteral("~\"") + text + u'"'; // "~" unquoted: still a regular expression
}

AgentFilter AgentFilter::parse(const QString &query)
{
    AgentFilter filter;
    auto fail = [&filter](const QString &message, int position) {
        filter.m_clauses.clear();
        filter.m_error = message;
        filter.m_errorPosition = position;
        return filter;
    };

    const Tokens tokens = tokenize(query);
    if (!tokens.error.isEmpty())
        return fail(tokens.error, tokens.errorPosition);

    bool pendingOr = false;
    int pendingOrPosition = -1;
    for (const Token &token : tokens.tokens) {
        if (isOrOperator(token)) {
            if (filter.m_clauses.empty() || pendingOr)
                return fail(tr("OR needs a term on its left"), token.position);
            pendingOr = true;
            pendingOrPosition = token.position;
            continue;
        }

        Term term;
        term.negated = token.negated;
        QString value = token.text;
        int valuePosition = token.textPosition;
        bool valueQuotedFromStart = token.firstQuoted == 0;
        if (token.colon >= 0) {
            const QString key = token.text.left(token.colon).toLower();
            if (key.isEmpty())
                return fail(tr("Missing key before ':' (keys: %1)").arg(keys().join(QLatin1String(", "))),
                            token.textPosition);
            bool known = false;
            for (const KeyInfo &k : kKeys) {
                if (key == QLatin1String(k.name)) {
                    term.field = k.field;
                    known = true;
                    break;
                }
            }
            if (!known)
                return fail(tr("Unknown key '%1' (keys: %2; quote the word to search for a colon)")
                                .arg(key, keys().join(QLatin1String(", "))),
                            token.textPosition);
            value = token.text.mid(token.colon + 1);
            valuePosition = token.textPosition + token.colon + 1;
            valueQuotedFromStart = token.firstQuoted == token.colon + 1;
            if (value.isEmpty())
                return fail(tr("Missing value after '%1:'").arg(key), valuePosition);
        } else if (value.isEmpty()) {
            return fail(tr("Empty quotes: put the text to search for between them"), token.textPosition);
        }

        if (value.startsWith(QLatin1Char('~')) && !valueQuotedFromStart) {
            if (term.field == Field::Is)
                return fail(tr("is: takes a word (%1), not a regular expression").arg(isValues().join(QLatin1String(", "))),
                            valuePosition);
            const QString pattern = value.mid(1);
            if (pattern.isEmpty())
                return fail(tr("Empty regular expression after '~'"), valuePosition);
            term.pattern = QRegularExpression(pattern, QRegularExpression::CaseInsensitiveOption);
            if (!term.pattern.isValid())
                return fail(tr("Invalid regular expression '%1': %2")
                                .arg(pattern, term.pattern.errorString()),
                            valuePosition + 1 + int(term.pattern.patternErrorOffset()));
        } else {
            term.value = value;
            if (term.field == Field::Health && !healthNames().contains(value.toLower()))
                return fail(tr("Unknown health '%1' (one of %2)").arg(value, healthNames().join(QLatin1String(", "))),
                            valuePosition);
            if (term.field == Field::Is && !isValues().contains(value.toLower()))
                return fail(tr("Unknown is:%1 (one of %2)").arg(value, isValues().join(QLatin1String(", "))),
                            valuePosition);
        }

        if (pendingOr)
            filter.m_clauses.back().push_back(std::move(term));
        else
            filter.m_clauses.push_back(Alternatives{std::move(term)});
        pendingOr = false;
    }
    if (pendingOr)
        return fail(tr("OR needs a term on its right"), pendingOrPosition);
    return filter;
}

bool AgentFilter::matches(const Agent &agent, const SystemStore &store) const
{
    if (!isValid())
        return false;
    for (const Alternatives &clause : m_clauses) {
        bool any = false;
        for (const Term &term : clause) {
            if (termMatches(term, agent, store) != term.negated) {
                any = true;
                break;
            }
        }
        if (!any)
            return false;
    }
    return true;
}

bool AgentFilter::termMatches(const Term &term, const Agent &agent, const SystemStore &store) const
{
    // Free-text fields match a substring; enumerations (role, state, health) the whole word.
    // A regex term searches (unanchored) in either case.
    auto sub = [&term](const QString &s) {
        return term.isRegex() ? term.pattern.match(s).hasMatch() : containsText(s, term.value);
    };
    auto whole = [&term](const QString &s) {
        return term.isRegex() ? term.pattern.match(s).hasMatch() : equalsText(s, term.value);
    };

    switch (term.field) {
    case Field::Text:
        return sub(agent.name) || sub(agent.role) || sub(agent.id);
    case Field::Name:
        return sub(agent.name);
    case Field::Role:
        return whole(agent.role);
    case Field::State: {
        // `state:failed` also finds the extension state "custom:failed".
        static const QLatin1String customPrefix("custom:");
        return whole(agent.state)
            || (agent.state.startsWith(customPrefix, Qt::CaseInsensitive) && whole(agent.state.mid(customPrefix.size())));
    }
    case Field::Health:
        return whole(healthName(agent.health));
    case Field::Scope:
        for (const QString &scopeId : agent.scopes) {
            if (sub(scopeId))
                return true;
            const Scope *scope = store.scope(scopeId);
            if (scope && !scope->name.isEmpty() && sub(scope->name))
                return true;
        }
        return false;
    case Field::Parent: {
        if (agent.parentId.isEmpty())
            return false;
        if (sub(agent.parentId))
            return true;
        const Agent *parent = store.agent(agent.parentId);
        return parent && !parent->name.isEmpty() && sub(parent->name);
    }
    case Field::Id:
        return sub(agent.id);
    case Field::Task:
        return !agent.currentTaskId.isEmpty() && sub(agent.currentTaskId);
    case Field::Session:
        return !agent.sessionId.isEmpty() && sub(agent.sessionId);
    case Field::Is:
        return term.value.compare(QLatin1String("departed"), Qt::CaseInsensitive) == 0 ? agent.unregistered
                                                                                         : agent.placeholder;
    case Field::System: {
        const QString system = AgentTableModel::originSystem(agent);
        return !system.isEmpty() && sub(system);
    }
    }
    return false;
}

} // namespace mapi::ui
