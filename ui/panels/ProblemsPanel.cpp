#include "panels/ProblemsPanel.h"

#include "common/TableSetup.h"
#include "models/ProblemModel.h"
#include "session/InspectorSession.h"

#include <QHeaderView>
#include <QLabel>
#include <QScrollBar>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

#include <memory>

namespace mapi::ui {

ProblemsPanel::ProblemsPanel(InspectorSession *session, SelectionHub *selection, QWidget *parent)
    : QWidget(parent)
    , m_selection(selection)
    , m_store(session->store())
    , m_problems(new ProblemModel(session->store(), this))
    , m_gaps(new GapModel(session->store(), this))
{
    m_missing = new QLabel(this);
    m_missing->setObjectName(QStringLiteral("observationMissing"));
    m_missing->setWordWrap(true);
    m_missing->setTextFormat(Qt::RichText);
    m_missing->setFrameShape(QFrame::StyledPanel);
    m_missing->setMargin(6);
    m_missing->setToolTip(tr("What the server did not give: the model shows what it could learn, and says here what "
                             "it could not. Each is also a row below."));
    m_problemsTitle = new QLabel(this);
    m_problemsTitle->setObjectName(QStringLiteral("problemsTitle"));
    m_problemsTitle->setWordWrap(true);
    m_problemsTitle->setToolTip(tr("Frames the inspector received but could not use. Each is kept (its first 64 KiB) and "
                                   "nothing else was dropped because of it. Select one to see the frame."));
    m_gapsTitle = new QLabel(this);
    m_gapsTitle->setObjectName(QStringLiteral("gapsTitle"));
    m_gapsTitle->setWordWrap(true);
    m_gapsTitle->setToolTip(tr("Events the server sent that never arrived: missing sequence numbers, or time spent "
                               "disconnected. A gap is recovered when the server could replay it."));
    m_problemsTable = makeTable(QStringLiteral("problemsTable"), m_problems, ProblemModel::DetailColumn);
    m_gapsTable = makeTable(QStringLiteral("gapsTable"), m_gaps, GapModel::DetailColumn);
    const int em = fontMetrics().horizontalAdvance(QLatin1Char('m'));
    m_problemsTable->horizontalHeader()->resizeSection(ProblemModel::TimeColumn, 8 * em);
    m_problemsTable->horizontalHeader()->resizeSection(ProblemModel::KindColumn, 11 * em);
    m_problemsTable->horizontalHeader()->resizeSection(ProblemModel::SizeColumn, 7 * em);
    m_gapsTable->horizontalHeader()->resizeSection(GapModel::TimeColumn, 8 * em);
    m_gapsTable->horizontalHeader()->resizeSection(GapModel::KindColumn, 10 * em);
    m_gapsTable->horizontalHeader()->resizeSection(GapModel::MissingColumn, 13 * em);
    m_gapsTable->horizontalHeader()->resizeSection(GapModel::RecoveredColumn, 7 * em);

    auto section = [this](QLabel *title, QTableView *table) {
        auto *box = new QWidget(this);
        auto *layout = new QVBoxLayout(box);
        layout->setContentsMargins(0, 0, 0, 0);
        layout->addWidget(title);
        layout->addWidget(table, 1);
        return box;
    };
    auto *splitter = new QSplitter(Qt::Vertical, this);
    splitter->setChildrenCollapsible(false);
    splitter->addWidget(section(m_problemsTitle, m_problemsTable));
    splitter->addWidget(section(m_gapsTitle, m_gapsTable));
    splitter->setStretchFactor(0, 2);
    splitter->setStretchFactor(1, 1);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(m_missing);
    layout->addWidget(splitter);

    // Selection, not the current index: keyboard focus entering the table sets a current index
    // without selecting anything, and that must not steal the inspector's focus.
    connect(m_problemsTable->selectionModel(), &QItemSelectionModel::selectionChanged, this, [this] {
        const QModelIndexList rows = m_problemsTable->selectionModel()->selectedRows();
        if (m_syncingSelection || rows.isEmpty())
            return;
        // The key is the problem's number for good: rows move up when the oldest are dropped.
        m_selection->focus(SelectionHub::Kind::Problem,
                           QString::number(qint64(rows.first().row()) + m_store->problemsDropped()), this);
    });
    connect(m_selection, &SelectionHub::focusChanged, this, &ProblemsPanel::followFocus);
    connect(m_store, &SystemStore::changed, this, [this](const ChangeSet &changes) {
        if (changes.countersChanged)
            updateTitles();
    });
    connect(m_store, &SystemStore::wasReset, this, &ProblemsPanel::updateTitles);
    updateTitles();
}

QTableView *ProblemsPanel::makeTable(const QString &objectName, QAbstractItemModel *model, int stretchColumn)
{
    auto *table = new QTableView(this);
    table->setObjectName(objectName);
    table->setModel(model);
    setUpReadOnlyTable(table, QAbstractItemView::SingleSelection, stretchColumn);
    followNewRows(table);
    return table;
}

void ProblemsPanel::updateTitles()
{
    const qint64 problems = m_store->counters().problems;
    const qint64 gaps = m_store->counters().gaps;
    const qint64 keptProblems = qint64(m_store->problems().size());
    const qint64 keptGaps = qint64(m_store->gaps().size());
    QString problemsText = problems == 0 ? tr("<b>Protocol problems</b> · none: every frame received was usable")
                                         : tr("<b>Protocol problems</b> · %1 · select one to see its frame in the Inspector").arg(problems);
    if (keptProblems < problems)
        problemsText += tr(" · the newest %1 listed").arg(keptProblems);
    m_problemsTitle->setText(problemsText);
    int lost = 0;
    for (const Gap &g : m_store->gaps())
        lost += g.recovered ? 0 : 1;
    QString gapsText = gaps == 0 ? tr("<b>Gaps</b> · none: no events were missed")
                                 : tr("<b>Gaps</b> · %1 · %2 not recovered").arg(gaps).arg(lost);
    if (keptGaps < gaps)
        gapsText = tr("<b>Gaps</b> · %1 · the first %2 listed, %3 of them not recovered").arg(gaps).arg(keptGaps).arg(lost);
    m_gapsTitle->setText(gapsText);
    const QStringList missing = m_store->observation().missing();
    m_missing->setVisible(!missing.isEmpty());
    if (!missing.isEmpty()) {
        QString text = tr("<b>This observation is incomplete</b>");
        for (const QString &reason : missing)
            text += QStringLiteral("<br>• ") + reason.toHtmlEscaped();
        m_missing->setText(text);
    }
}

void ProblemsPanel::followFocus(SelectionHub::Kind kind, const QString &key, QObject *origin)
{
    if (origin == this)
        return;
    m_syncingSelection = true;
    bool ok = false;
    const int row = kind == SelectionHub::Kind::Problem ? int(key.toLongLong(&ok) - m_store->problemsDropped()) : -1;
    selectRowOrNothing(m_problemsTable, ok ? row : -1);
    m_syncingSelection = false;
}

} // namespace mapi::ui
