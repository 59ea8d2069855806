// Work that can wait a turn of the event loop, shared among the owners that ask for it: each
// turn runs one waiting piece, in the order asked. Several open systems' detectors (a slice of
// reading, a part of a verdict) then never stack into one turn: three systems' pieces in one
// turn, with the window's repaint, were the 40-50 ms stalls of a three-system flood.
// Thread: the thread it lives on; owners and pieces live and run there.
#pragma once

#include <QObject>
#include <QPointer>
#include <QTimer>

#include <deque>
#include <functional>

namespace mapi {

class TurnShare : public QObject
{
    Q_OBJECT
public:
    explicit TurnShare(QObject *parent = nullptr);

    // Runs `piece` at a later turn, after the pieces asked for before it. Asking again for the
    // same (owner, kind) while one waits changes nothing: it keeps its place. A piece whose
    // owner is gone is skipped.
    void ask(const QObject *owner, int kind, std::function<void()> piece);
    void cancel(const QObject *owner, int kind);
    void cancelAll(const QObject *owner);
    bool isWaiting(const QObject *owner, int kind) const;
    size_t waitingCount() const { return m_waiting.size(); }

private:
    void runOne();

    struct Piece
    {
        QPointer<const QObject> owner; // null once the owner is destroyed
        const QObject *key = nullptr;  // the owner's address, to find the piece by
        int kind = 0;
        std::function<void()> run;
    };
    std::deque<Piece> m_waiting;
    QTimer m_turn; // zero-interval: one piece after the event loop has run
};

} // namespace mapi
