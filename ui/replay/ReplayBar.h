// The replay bar under the centre view while a trace is open: play/pause, speed (0.1×–100×),
// step back and forward, a scrubber to seek anywhere, the current time and the trace's range,
// and bookmarks with notes. It drives the session's ReplayController, i.e. the one SystemStore
// every panel shows, so the whole window shows the system as it was at the bar's position.
//
// Its actions (windowActions()) carry the shortcuts; the window adds them to itself so they work
// from every panel and appear in Help → Keyboard shortcuts. Space plays/pauses too, but only
// while the bar or the centre view has the focus (spaceTargets), so it never steals a space
// typed into a text field.
//
// Bookmarks live in "<trace>.bookmarks.json" (core/trace/TraceTimeline.h) and are saved at each
// change; a folder that cannot be written only reports bookmarkSaveFailed, the bookmarks stay
// in memory for the session. Thread: GUI thread.
#pragma once

#include "replay/ScrubberSlider.h"
#include "trace/TraceTimeline.h"

#include <QPointer>
#include <QTimer>
#include <QWidget>

class QAction;
class QComboBox;
class QLabel;
class QMenu;
class QToolButton;

namespace mapi::ui {

class ReplayBar : public QWidget
{
    Q_OBJECT
public:
    // Speeds offered by the selector, in the order shown.
    static const QList<double> &speeds();

    explicit ReplayBar(QWidget *parent = nullptr);

    // Attaches the controller of a freshly loaded trace (null: detaches) and loads the trace's
    // bookmarks. Actions are enabled only while attached.
    void setController(ReplayController *controller, const QString &tracePath);
    ReplayController *controller() const { return m_controller; }

    // Widgets in which a bare Space plays/pauses (the bar itself is always one).
    void addSpaceTarget(QWidget *widget);

    QList<QAction *> windowActions() const;

    // A button at the bar's end for `action` (null: none), e.g. "Back to live" while a live
    // session is viewed in the past.
    void setTrailingAction(QAction *action);
    // The range ends at the live edge (a live session viewed in the past): marked on the scrubber.
    void setLiveEdge(bool on);
    ScrubberSlider *scrubber() const { return m_scrubber; }
    // A note after the range, e.g. "history before T dropped by retention" (empty: none).
    void setNote(const QString &note);

    // When alerts were open, drawn along the scrubber (model time, ms; toMs < 0: still open, to
    // the range's end). Kept across controllers: the window sets them after each evaluation.
    struct AlertMark
    {
        qint64 fromMs = 0;
        qint64 toMs = -1;
        bool critical = false;
        QString title;
        int titleKey = -1; // with no title: `titler` makes it on hover (ScrubberSlider::SpanTitler)
    };
    void setAlertMarks(std::vector<AlertMark> marks, ScrubberSlider::SpanTitler titler = {});

    // Bookmarks of the attached trace, in time order.
    const QList<Bookmark> &bookmarks() const { return m_bookmarks; }
    // Each saves the list; false when saving failed (the change is kept in memory).
    bool addBookmark(const QString &title, const QString &note); // at the current position
    // Takes `bookmarks` (an incident bundle's) when the trace has none of its own yet; they are
    // saved beside it with the next change. False when the trace already had bookmarks.
    bool adoptBookmarks(const QList<Bookmark> &bookmarks);
    bool updateBookmark(int index, const QString &title, const QString &note);
    bool removeBookmark(int index);
    void jumpToBookmark(int index);
    QString lastSaveError() const { return m_saveError; }

public Q_SLOTS:
    void addBookmarkWithDialog();   // asks for a title and a note
    void editBookmarkWithDialog(int index);

Q_SIGNALS:
    void bookmarkSaveFailed(const QString &error);

protected:
    void changeEvent(QEvent *event) override; // the media glyphs follow the theme

private:
    void updateMediaIcons();
    void togglePlay();
    void updatePosition(qint64 timeMs);
    void updatePlaying(bool playing);
    void updateSpeed(double speed);
    void scrubberMoved(int value);
    void fillBookmarkMenu();
    bool saveBookmarkList();
    void refreshTicks(); // the scrubber's bookmark ticks from m_bookmarks, and its alert spans from m_alertMarks
    std::vector<AlertMark> m_alertMarks;
    QString clockText(qint64 timeMs) const;

    QToolButton *m_trailingButton = nullptr;
    QLabel *m_note = nullptr;
    QPointer<ReplayController> m_controller;
    QString m_tracePath;
    QList<Bookmark> m_bookmarks;
    QString m_saveError;

    QAction *m_playAction;
    QAction *m_stepBackAction;
    QAction *m_stepForwardAction;
    QAction *m_toStartAction;
    QAction *m_toEndAction;
    QAction *m_fasterAction;
    QAction *m_slowerAction;
    QAction *m_addBookmarkAction;
    QComboBox *m_speed;
    ScrubberSlider *m_scrubber;
    QLabel *m_time;
    QLabel *m_range;
    QToolButton *m_bookmarkButton;
    QMenu *m_bookmarkMenu;

    // The scrubber counts steps of m_msPerStep from the trace's start (a QSlider holds an int:
    // one millisecond per step up to 24 days of trace, coarser beyond).
    qint64 m_msPerStep = 1;
    bool m_settingScrubber = false; // moving the scrubber to follow the position: no seek
    QTimer m_seekTimer;             // coalesces seeks while the scrubber is dragged
    int m_pendingSeekValue = 0;
};

} // namespace mapi::ui
