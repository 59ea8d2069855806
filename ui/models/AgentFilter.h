// The agent filter language of the Agents panel (documented in docs/filter-language.md).
//
//   role:worker -state:stopped health:late OR health:unresponsive name:~^worker-\d+$ "two words"
//
// Whitespace-separated terms are ANDed; `OR` (upper case) between two terms makes them
// alternatives and binds tighter than the implicit AND, so `a b OR c` means a AND (b OR c).
// A leading `-` negates a term; double quotes keep spaces (and `\"`, `\\` escapes) in a value.
//
// Parsing never throws: a query that does not parse yields an invalid filter with a message and
// the character position of the problem. Pure logic over the store's structs: no widgets, so it
// is tested without a window. Thread: whichever thread owns the store passed to matches().
#pragma once

#include "model/ModelTypes.h"

#include <QRegularExpression>
#include <QString>
#include <QStringList>

#include <vector>

namespace mapi {
class SystemStore;
}

namespace mapi::ui {

class AgentFilter
{
public:
    enum class Field {
        Text,    // bare word: name, role or id
        Name,
        Role,
        State,
        Health,
        Scope,   // scope name or id
        Parent,  // parent name or id
        Id,
        Task,    // current task id
        Session, // session id
        Is,      // is:departed, is:placeholder
        System,  // the system another system's agent comes from (federation)
    };

    struct Term
    {
        Field field = Field::Text;
        bool negated = false;
        QString value;               // as typed, quotes removed; empty for a regex term
        QRegularExpression pattern;  // valid only for `key:~regex` terms (case-insensitive)
        bool isRegex() const { return pattern.isValid() && !pattern.pattern().isEmpty(); }
    };
    using Alternatives = std::vector<Term>; // any one matching term satisfies the clause

    // An empty (or blank) query gives a valid filter that matches every agent.
    static AgentFilter parse(const QString &query);
    // `value` as a term's value: quoted when it holds a space, a quote or a backslash, is empty,
    // or starts with "~" (which would make it a regular expression).
    static QString quoted(const QString &value);
    // A term's value that matches `value` whole, not as a part (scope:, parent: and the bare
    // word look for parts): an anchored regular expression, "~^team/ingest$".
    static QString exactly(const QString &value);

    bool isValid() const { return m_error.isEmpty(); }
    bool matchesEverything() const { return m_clauses.empty(); }
    QString errorString() const { return m_error; }
    int errorPosition() const { return m_errorPosition; } // 0-based index into the query, -1 when valid

    // Every clause must hold. An invalid filter matches nothing.
    bool matches(const Agent &agent, const SystemStore &store) const;

    const std::vector<Alternatives> &clauses() const { return m_clauses; }

    // The keys accepted before a colon, in documentation order.
    static QStringList keys();

private:
    bool termMatches(const Term &term, const Agent &agent, const SystemStore &store) const;

    std::vector<Alternatives> m_clauses;
    QString m_error;
    int m_errorPosition = -1;
};

} // namespace mapi::ui
