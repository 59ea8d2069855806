#include "common/TurnShare.h"

#include <algorithm>
#include <utility>

namespace mapi {

TurnShare::TurnShare(QObject *parent)
    : QObject(parent)
{
    m_turn.setObjectName(QStringLiteral("turnShare"));
    m_turn.setSingleShot(true);
    m_turn.setInterval(0);
    connect(&m_turn, &QTimer::timeout, this, &TurnShare::runOne);
}

void TurnShare::ask(const QObject *owner, int kind, std::function<void()> piece)
{
    if (isWaiting(owner, kind))
        return;
    m_waiting.push_back({owner, owner, kind, std::move(piece)});
    if (!m_turn.isActive())
        m_turn.start();
}

void TurnShare::cancel(const QObject *owner, int kind)
{
    m_waiting.erase(std::remove_if(m_waiting.begin(), m_waiting.end(),
                                   [&](const Piece &p) { return p.key == owner && p.kind == kind; }),
                    m_waiting.end());
}

void TurnShare::cancelAll(const QObject *owner)
{
    m_waiting.erase(std::remove_if(m_waiting.begin(), m_waiting.end(), [&](const Piece &p) { return p.key == owner; }),
                    m_waiting.end());
}

bool TurnShare::isWaiting(const QObject *owner, int kind) const
{
    return std::any_of(m_waiting.cbegin(), m_waiting.cend(), [&](const Piece &p) { return p.key == owner && p.kind == kind && p.owner; });
}

void TurnShare::runOne()
{
    while (!m_waiting.empty()) {
        Piece piece = std::move(m_waiting.front());
        m_waiting.pop_front();
        if (!piece.owner)
            continue; // its owner is gone: the next one runs in this turn instead
        // Restarted before the piece runs: a piece that asks again goes behind the others.
        if (!m_waiting.empty())
            m_turn.start();
        const QPointer<TurnShare> alive(this);
        piece.run();
        if (!alive)
            return; // the piece destroyed this share (its owner's own, with the owner)
        break;
    }
    if (!m_waiting.empty() && !m_turn.isActive())
        m_turn.start();
}

} // namespace mapi
