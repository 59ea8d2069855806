#include "replay/ReplayBar.h"

#include "common/TimeText.h"
#include "style/MediaIcons.h"

#include "common/DialogButtons.h"

#include <QAction>
#include <QComboBox>
#include <QDateTime>
#include <QDialog>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QVBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QShortcut>
#include <QSlider>
#include <QStyle>
#include <QToolButton>

#include <algorithm>
#include <cmath>
#include <limits>

namespace mapi::ui {

namespace {

// "12.345 s", "3 min 05 s", "2 h 07 min": a span at the precision that matters for it.
QString spanText(qint64 ms)
{
    if (ms < 60'000)
        return QObject::tr("%1 s").arg(double(ms) / 1000.0, 0, 'f', 3);
    const qint64 s = ms / 1000;
    if (s < 3600)
        return QObject::tr("%1 min %2 s").arg(s / 60).arg(s % 60, 2, 10, QLatin1Char('0'));
    return QObject::tr("%1 h %2 min").arg(s / 3600).arg((s / 60) % 60, 2, 10, QLatin1Char('0'));
}

// Asks for a bookmark's title and note; false when cancelled.
bool askBookmark(QWidget *parent, const QString &windowTitle, const QString &when, Bookmark &bookmark)
{
    QDialog dialog(parent);
    dialog.setObjectName(QStringLiteral("bookmarkDialog"));
    dialog.setWindowTitle(windowTitle);
    auto *title = new QLineEdit(bookmark.title, &dialog);
    title->setObjectName(QStringLiteral("bookmarkTitle"));
    auto *note = new QPlainTextEdit(bookmark.note, &dialog);
    note->setObjectName(QStringLiteral("bookmarkNote"));
    note->setPlaceholderText(QObject::tr("What happens here, what to look at"));
    QDialogButtonBox *buttons = okCancelButtons(&dialog);
    QObject::connect(title, &QLineEdit::textChanged, &dialog, [buttons](const QString &text) {
        buttons->button(QDialogButtonBox::Ok)->setEnabled(!text.trimmed().isEmpty());
    });
    auto *form = new QFormLayout(&dialog);
    form->addRow(QObject::tr("Time:"), new QLabel(when, &dialog));
    form->addRow(QObject::tr("&Title:"), title);
    form->addRow(QObject::tr("&Note:"), note);
    form->addRow(buttons);
    title->selectAll();
    if (dialog.exec() != QDialog::Accepted)
        return false;
    bookmark.title = title->text().trimmed();
    bookmark.note = note->toPlainText();
    return true;
}

} // namespace

const QList<double> &ReplayBar::speeds()
{
    static const QList<double> list = {0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 50, 100};
    return list;
}

ReplayBar::ReplayBar(QWidget *parent)
    : QWidget(parent)
{
    setObjectName(QStringLiteral("replayBar"));
    auto make = [this](const char *name, const QString &text, const QKeySequence &key, QStyle::StandardPixmap icon) {
        auto *a = new QAction(style()->standardIcon(icon), text, this);
        a->setObjectName(QLatin1String(name));
        a->setShortcut(key);
        a->setShortcutContext(Qt::ApplicationShortcut);
        a->setToolTip(QStringLiteral("%1 (%2)").arg(QString(text).remove(QLatin1Char('&')),
                                                    key.toString(QKeySequence::NativeText)));
        a->setEnabled(false);
        return a;
    };
    m_playAction = make("replayPlayPause", tr("&Play / pause replay"), QKeySequence(Qt::CTRL | Qt::Key_Space), QStyle::SP_MediaPlay);
    m_stepBackAction = make("replayStepBack", tr("Step &back"), QKeySequence(Qt::CTRL | Qt::Key_Left), QStyle::SP_MediaSeekBackward);
    m_stepForwardAction = make("replayStepForward", tr("Step &forward"), QKeySequence(Qt::CTRL | Qt::Key_Right), QStyle::SP_MediaSeekForward);
    m_toStartAction = make("replayToStart", tr("Go to the &start"), QKeySequence(Qt::CTRL | Qt::Key_Home), QStyle::SP_MediaSkipBackward);
    m_toEndAction = make("replayToEnd", tr("Go to the &end"), QKeySequence(Qt::CTRL | Qt::Key_End), QStyle::SP_MediaSkipForward);
    m_fasterAction = make("replayFaster", tr("Replay fas&ter"), QKeySequence(Qt::CTRL | Qt::Key_BracketRight), QStyle::SP_ArrowUp);
    m_slowerAction = make("replaySlower", tr("Replay slo&wer"), QKeySequence(Qt::CTRL | Qt::Key_BracketLeft), QStyle::SP_ArrowDown);
    m_addBookmarkAction = make("replayAddBookmark", tr("Add &bookmark…"), QKeySequence(Qt::CTRL | Qt::Key_B), QStyle::SP_DialogSaveButton);
    m_playAction->setCheckable(true);
    updateMediaIcons();

    connect(m_playAction, &QAction::triggered, this, &ReplayBar::togglePlay);
    connect(m_stepBackAction, &QAction::triggered, this, [this] {
        if (m_controller)
            m_controller->stepBack();
    });
    connect(m_stepForwardAction, &QAction::triggered, this, [this] {
        if (m_controller)
            m_controller->step();
    });
    connect(m_toStartAction, &QAction::triggered, this, [this] {
        if (m_controller)
            m_controller->seek(m_controller->startMs());
    });
    connect(m_toEndAction, &QAction::triggered, this, [this] {
        if (m_controller)
            m_controller->seek(m_controller->endMs());
    });
    connect(m_fasterAction, &QAction::triggered, this, [this] { m_speed->setCurrentIndex(std::min(m_speed->currentIndex() + 1, m_speed->count() - 1)); });
    connect(m_slowerAction, &QAction::triggered, this, [this] { m_speed->setCurrentIndex(std::max(m_speed->currentIndex() - 1, 0)); });
    connect(m_addBookmarkAction, &QAction::triggered, this, &ReplayBar::addBookmarkWithDialog);

    auto button = [this](QAction *action) {
        auto *b = new QToolButton(this);
        b->setDefaultAction(action);
        b->setAutoRaise(true);
        b->setObjectName(action->objectName() + QStringLiteral("Button"));
        return b;
    };

    m_speed = new QComboBox(this);
    m_speed->setObjectName(QStringLiteral("replaySpeed"));
    m_speed->setToolTip(tr("Replay speed: trace time per wall-clock time"));
    for (double s : speeds())
        m_speed->addItem(QStringLiteral("%1×").arg(s), s);
    m_speed->setCurrentIndex(int(speeds().indexOf(1.0)));
    connect(m_speed, &QComboBox::currentIndexChanged, this, [this](int index) {
        if (m_controller && index >= 0)
            m_controller->setSpeed(m_speed->itemData(index).toDouble());
    });

    m_scrubber = new ScrubberSlider(this);
    m_scrubber->setObjectName(QStringLiteral("replayScrubber"));
    m_scrubber->setToolTip(tr("Drag to show the system as it was at any time of the trace"));
    m_scrubber->setFocusPolicy(Qt::StrongFocus);
    connect(m_scrubber, &QSlider::valueChanged, this, &ReplayBar::scrubberMoved);
    m_seekTimer.setSingleShot(true);
    m_seekTimer.setInterval(40); // a seek back rebuilds the model: at most ~25 per second while dragging
    connect(&m_seekTimer, &QTimer::timeout, this, [this] {
        if (m_controller)
            m_controller->seek(m_controller->startMs() + qint64(m_pendingSeekValue) * m_msPerStep);
    });

    m_time = new QLabel(this);
    m_time->setObjectName(QStringLiteral("replayTime"));
    m_time->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_range = new QLabel(this);
    m_range->setObjectName(QStringLiteral("replayRange"));

    m_bookmarkMenu = new QMenu(this);
    m_bookmarkMenu->setObjectName(QStringLiteral("bookmarkMenu"));
    connect(m_bookmarkMenu, &QMenu::aboutToShow, this, &ReplayBar::fillBookmarkMenu);
    m_bookmarkButton = new QToolButton(this);
    m_bookmarkButton->setObjectName(QStringLiteral("replayBookmarks"));
    m_bookmarkButton->setText(tr("Bookmarks"));
    m_bookmarkButton->setToolTip(tr("Bookmarks of this trace: add, jump to, edit, delete"));
    m_bookmarkButton->setPopupMode(QToolButton::InstantPopup);
    m_bookmarkButton->setMenu(m_bookmarkMenu);
    m_bookmarkButton->setAutoRaise(true);

    // Two rows: the scrubber alone on the first, across the bar's whole width (scrubbing is the
    // heart of replay: it never shares its row with labels that squeeze it), the controls and
    // the times under it. The labels give way first when the window is narrow.
    m_time->setMinimumWidth(m_time->fontMetrics().horizontalAdvance(QStringLiteral("00:00:00.000 (+00 min 00 s)")));
    m_range->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_range->setMinimumWidth(60);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 2, 6, 2);
    layout->setSpacing(0);
    layout->addWidget(m_scrubber);
    auto *controls = new QHBoxLayout;
    layout->addLayout(controls);
    controls->addWidget(button(m_toStartAction));
    controls->addWidget(button(m_stepBackAction));
    controls->addWidget(button(m_playAction));
    controls->addWidget(button(m_stepForwardAction));
    controls->addWidget(button(m_toEndAction));
    controls->addWidget(m_speed);
    controls->addWidget(m_time);
    controls->addWidget(m_range, 1);
    m_note = new QLabel(this);
    m_note->setObjectName(QStringLiteral("replayNote"));
    m_note->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_note->hide();
    controls->addWidget(m_note, 1);
    controls->addWidget(m_bookmarkButton);
    m_trailingButton = new QToolButton(this);
    m_trailingButton->setObjectName(QStringLiteral("replayTrailing"));
    m_trailingButton->setToolButtonStyle(Qt::ToolButtonTextOnly);
    m_trailingButton->hide();
    controls->addWidget(m_trailingButton);
    addSpaceTarget(this);
    setController(nullptr, QString());
}

QList<QAction *> ReplayBar::windowActions() const
{
    return {m_playAction, m_stepBackAction, m_stepForwardAction, m_toStartAction, m_toEndAction,
            m_fasterAction, m_slowerAction, m_addBookmarkAction};
}

void ReplayBar::setTrailingAction(QAction *action)
{
    m_trailingButton->setDefaultAction(action);
    m_trailingButton->setVisible(action != nullptr);
}

void ReplayBar::setLiveEdge(bool on)
{
    m_scrubber->setLiveEdge(on);
}

void ReplayBar::setAlertMarks(std::vector<AlertMark> marks, ScrubberSlider::SpanTitler titler)
{
    m_alertMarks = std::move(marks);
    m_scrubber->setSpanTitler(std::move(titler));
    refreshTicks();
}

void ReplayBar::refreshTicks()
{
    std::vector<ScrubberSlider::Tick> ticks;
    std::vector<ScrubberSlider::Span> spans;
    if (m_controller) {
        const qint64 start = m_controller->startMs(), end = m_controller->endMs();
        const double span = double(std::max<qint64>(end - start, 1));
        const auto fraction = [&](qint64 t) { return std::clamp(double(t - start) / span, 0.0, 1.0); };
        for (const Bookmark &b : std::as_const(m_bookmarks))
            ticks.push_back({fraction(b.timeMs), b.title});
        for (const AlertMark &mark : m_alertMarks)
            if (mark.fromMs <= end && (mark.toMs < 0 || mark.toMs >= start))
                spans.push_back({fraction(mark.fromMs), mark.toMs < 0 ? 1.0 : fraction(mark.toMs), mark.critical, mark.title, mark.titleKey});
    }
    m_scrubber->setTicks(std::move(ticks));
    m_scrubber->setSpans(std::move(spans));
}

void ReplayBar::setNote(const QString &note)
{
    m_note->setText(note);
    m_note->setToolTip(note); // the label may be cut when the window is narrow
    m_note->setVisible(!note.isEmpty());
}

void ReplayBar::addSpaceTarget(QWidget *widget)
{
    auto *space = new QShortcut(QKeySequence(Qt::Key_Space), widget, nullptr, nullptr, Qt::WidgetWithChildrenShortcut);
    space->setObjectName(QStringLiteral("replaySpace"));
    connect(space, &QShortcut::activated, this, [this] {
        if (m_controller)
            togglePlay();
    });
}

void ReplayBar::setController(ReplayController *controller, const QString &tracePath)
{
    if (m_controller)
        disconnect(m_controller, nullptr, this, nullptr);
    m_seekTimer.stop();
    m_controller = controller;
    m_tracePath = tracePath;
    m_bookmarks.clear();
    m_saveError.clear();
    for (QAction *a : windowActions())
        a->setEnabled(controller != nullptr);
    m_speed->setEnabled(controller != nullptr);
    m_scrubber->setEnabled(controller != nullptr);
    m_scrubber->setLiveEdge(false);
    // Bookmarks are kept next to a trace file; a live session's past has none to keep them by.
    m_bookmarkButton->setEnabled(controller != nullptr && !tracePath.isEmpty());
    m_addBookmarkAction->setEnabled(controller != nullptr && !tracePath.isEmpty());
    if (!controller) {
        m_time->clear();
        m_range->clear();
        updatePlaying(false);
        return;
    }
    ErrorOr<QList<Bookmark>> bookmarks = loadBookmarks(tracePath);
    m_bookmarks = bookmarks ? std::move(bookmarks).value() : QList<Bookmark>();
    if (!bookmarks)
        Q_EMIT bookmarkSaveFailed(tr("Cannot read the bookmarks: %1").arg(bookmarks.error()));
    std::sort(m_bookmarks.begin(), m_bookmarks.end(), [](const Bookmark &a, const Bookmark &b) { return a.timeMs < b.timeMs; });

    const qint64 span = std::max<qint64>(controller->endMs() - controller->startMs(), 0);
    m_msPerStep = std::max<qint64>(1, span / std::numeric_limits<int>::max() + 1);
    m_settingScrubber = true;
    m_scrubber->setRange(0, int(span / m_msPerStep));
    m_scrubber->setPageStep(std::max(1, m_scrubber->maximum() / 20));
    m_scrubber->setSingleStep(std::max(1, m_scrubber->maximum() / 200));
    m_settingScrubber = false;
    // Record times: when the recorder received each frame, on its own clock (common/TimeText.h).
    const QDateTime start = QDateTime::fromMSecsSinceEpoch(controller->startMs());
    const QDateTime end = QDateTime::fromMSecsSinceEpoch(controller->endMs());
    m_range->setText(tr("%1 – %2 · %3")
                         .arg(start.toString(QStringLiteral("HH:mm:ss")), end.toString(QStringLiteral("HH:mm:ss")), spanText(span)));
    m_range->setToolTip(tr("The trace runs from %1 to %2")
                            .arg(start.toString(Qt::ISODateWithMs), end.toString(Qt::ISODateWithMs)));

    controller->setSpeed(m_speed->currentData().toDouble()); // the speed chosen for the last trace stays
    connect(controller, &ReplayController::positionChanged, this, &ReplayBar::updatePosition);
    connect(controller, &ReplayController::playingChanged, this, &ReplayBar::updatePlaying);
    connect(controller, &ReplayController::speedChanged, this, &ReplayBar::updateSpeed);
    updatePlaying(controller->isPlaying());
    updatePosition(controller->positionMs());
    refreshTicks();
}

void ReplayBar::togglePlay()
{
    if (!m_controller)
        return;
    if (m_controller->isPlaying()) {
        m_controller->pause();
        return;
    }
    if (m_controller->positionMs() >= m_controller->endMs())
        m_controller->seek(m_controller->startMs()); // play from the end: start over
    m_controller->play();
}

void ReplayBar::updatePosition(qint64 timeMs)
{
    if (!m_controller)
        return;
    m_time->setText(clockText(timeMs));
    m_time->setToolTip(QDateTime::fromMSecsSinceEpoch(timeMs).toString(Qt::ISODateWithMs)); // a record time
    if (!m_scrubber->isSliderDown() && !m_seekTimer.isActive()) {
        m_settingScrubber = true;
        m_scrubber->setValue(int((timeMs - m_controller->startMs()) / m_msPerStep));
        m_settingScrubber = false;
    }
}

void ReplayBar::updatePlaying(bool playing)
{
    m_playAction->setChecked(playing);
    m_playAction->setIcon(mediaIcon(playing ? MediaGlyph::Pause : MediaGlyph::Play, palette()));
}

void ReplayBar::updateMediaIcons()
{
    m_playAction->setIcon(mediaIcon(m_playAction->isChecked() ? MediaGlyph::Pause : MediaGlyph::Play, palette()));
    m_stepBackAction->setIcon(mediaIcon(MediaGlyph::StepBack, palette()));
    m_stepForwardAction->setIcon(mediaIcon(MediaGlyph::StepForward, palette()));
    m_toStartAction->setIcon(mediaIcon(MediaGlyph::ToStart, palette()));
    m_toEndAction->setIcon(mediaIcon(MediaGlyph::ToEnd, palette()));
}

void ReplayBar::changeEvent(QEvent *event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange)
        updateMediaIcons();
}

void ReplayBar::updateSpeed(double speed)
{
    // The nearest offered speed (the controller clamps, the list covers its range).
    int best = 0;
    for (int i = 1; i < m_speed->count(); ++i)
        if (std::abs(m_speed->itemData(i).toDouble() - speed) < std::abs(m_speed->itemData(best).toDouble() - speed))
            best = i;
    const QSignalBlocker block(m_speed);
    m_speed->setCurrentIndex(best);
}

void ReplayBar::scrubberMoved(int value)
{
    if (m_settingScrubber || !m_controller)
        return;
    m_pendingSeekValue = value;
    m_seekTimer.start();
}

QString ReplayBar::clockText(qint64 timeMs) const
{
    const qint64 offset = m_controller ? timeMs - m_controller->startMs() : 0;
    return tr("%1 (+%2)").arg(timeOfDay(timeMs, TimePrecision::Milliseconds, Clock::Local), spanText(offset)); // a record time
}

// ---- bookmarks -------------------------------------------------------------------------

bool ReplayBar::adoptBookmarks(const QList<Bookmark> &bookmarks)
{
    if (!m_bookmarks.isEmpty() || !m_controller)
        return false;
    m_bookmarks = bookmarks;
    std::sort(m_bookmarks.begin(), m_bookmarks.end(), [](const Bookmark &a, const Bookmark &b) { return a.timeMs < b.timeMs; });
    fillBookmarkMenu();
    refreshTicks();
    return true;
}

bool ReplayBar::saveBookmarkList()
{
    std::stable_sort(m_bookmarks.begin(), m_bookmarks.end(), [](const Bookmark &a, const Bookmark &b) { return a.timeMs < b.timeMs; });
    refreshTicks();
    QString error;
    if (saveBookmarks(m_tracePath, m_bookmarks, &error)) {
        m_saveError.clear();
        return true;
    }
    m_saveError = error;
    Q_EMIT bookmarkSaveFailed(tr("Bookmarks not saved (kept until the trace is closed): %1").arg(error));
    return false;
}

bool ReplayBar::addBookmark(const QString &title, const QString &note)
{
    if (!m_controller)
        return false;
    m_bookmarks << Bookmark{m_controller->positionMs(), title, note};
    return saveBookmarkList();
}

bool ReplayBar::updateBookmark(int index, const QString &title, const QString &note)
{
    if (index < 0 || index >= m_bookmarks.size())
        return false;
    m_bookmarks[index].title = title;
    m_bookmarks[index].note = note;
    return saveBookmarkList();
}

bool ReplayBar::removeBookmark(int index)
{
    if (index < 0 || index >= m_bookmarks.size())
        return false;
    m_bookmarks.removeAt(index);
    return saveBookmarkList();
}

void ReplayBar::jumpToBookmark(int index)
{
    if (m_controller && index >= 0 && index < m_bookmarks.size())
        m_controller->seek(m_bookmarks[index].timeMs);
}

void ReplayBar::addBookmarkWithDialog()
{
    if (!m_controller)
        return;
    m_controller->pause(); // the bookmark is where the replay is when asked
    Bookmark b{m_controller->positionMs(), tr("Bookmark %1").arg(m_bookmarks.size() + 1), QString()};
    if (askBookmark(this, tr("Add bookmark"), clockText(b.timeMs), b))
        addBookmark(b.title, b.note);
}

void ReplayBar::editBookmarkWithDialog(int index)
{
    if (index < 0 || index >= m_bookmarks.size())
        return;
    Bookmark b = m_bookmarks[index];
    if (askBookmark(this, tr("Edit bookmark"), clockText(b.timeMs), b))
        updateBookmark(index, b.title, b.note);
}

void ReplayBar::fillBookmarkMenu()
{
    m_bookmarkMenu->clear();
    qDeleteAll(m_bookmarkMenu->findChildren<QMenu *>(QString(), Qt::FindDirectChildrenOnly)); // last time's submenus
    m_bookmarkMenu->addAction(m_addBookmarkAction);
    m_bookmarkMenu->addSeparator();
    if (m_bookmarks.isEmpty()) {
        m_bookmarkMenu->addAction(tr("(no bookmarks yet)"))->setEnabled(false);
        return;
    }
    m_bookmarkMenu->setToolTipsVisible(true);
    QMenu *edit = new QMenu(tr("&Edit"), m_bookmarkMenu);
    QMenu *remove = new QMenu(tr("&Delete"), m_bookmarkMenu);
    for (int i = 0; i < m_bookmarks.size(); ++i) {
        const Bookmark &b = m_bookmarks[i];
        const QString label = QStringLiteral("%1  %2").arg(clockText(b.timeMs), b.title);
        QAction *jump = m_bookmarkMenu->addAction(label, this, [this, i] { jumpToBookmark(i); });
        jump->setToolTip(b.note);
        edit->addAction(label, this, [this, i] { editBookmarkWithDialog(i); });
        remove->addAction(label, this, [this, i] {
            if (QMessageBox::question(this, tr("Delete bookmark"), tr("Delete the bookmark \"%1\" and its note?").arg(m_bookmarks.value(i).title))
                == QMessageBox::Yes)
                removeBookmark(i);
        });
    }
    m_bookmarkMenu->addSeparator();
    m_bookmarkMenu->addMenu(edit);
    m_bookmarkMenu->addMenu(remove);
}

} // namespace mapi::ui
