#include "dialogs/RunDiffDialog.h"

#include "trace/TraceLoader.h"

#include <QCoreApplication>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPointer>
#include <QPushButton>
#include <QSaveFile>
#include <QThread>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace mapi::ui {

namespace {

QString q(const Json &j)
{
    if (j.is_string())
        return QString::fromStdString(j.get<std::string>());
    if (j.is_null())
        return QStringLiteral("—");
    return QString::fromStdString(j.dump());
}

QString offsetText(qint64 ms)
{
    return QStringLiteral("%1 s").arg(QLocale().toString(double(ms) / 1000.0, 'f', 3));
}

} // namespace

RunDiffDialog::RunDiffDialog(const SystemStore *store, const QString &tracePath, QWidget *parent)
    : QDialog(parent)
    , m_store(store)
    , m_tracePath(tracePath)
{
    setWindowTitle(tr("Compare runs"));
    setObjectName(QStringLiteral("runDiffDialog"));
    auto *layout = new QVBoxLayout(this);
    auto *a = new QLabel(tr("Run A: %1").arg(tracePath.isEmpty() ? tr("the live session in this window")
                                                                 : QDir::toNativeSeparators(tracePath)));
    a->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(a);
    auto *row = new QHBoxLayout;
    row->addWidget(new QLabel(tr("Run B:")));
    m_other = new QLineEdit;
    m_other->setObjectName(QStringLiteral("otherTrace"));
    m_other->setPlaceholderText(tr("a trace, capture, message log or OTLP file"));
    row->addWidget(m_other, 1);
    auto *browse = new QPushButton(tr("&Browse…"));
    row->addWidget(browse);
    m_compare = new QPushButton(tr("&Compare"));
    m_compare->setDefault(true);
    row->addWidget(m_compare);
    layout->addLayout(row);

    m_verdict = new QLabel;
    m_verdict->setObjectName(QStringLiteral("verdict"));
    QFont bold = m_verdict->font();
    bold.setBold(true);
    m_verdict->setFont(bold);
    layout->addWidget(m_verdict);
    auto *firstRow = new QHBoxLayout;
    m_first = new QLabel;
    m_first->setObjectName(QStringLiteral("firstDivergence"));
    m_first->setWordWrap(true);
    m_first->setTextInteractionFlags(Qt::TextSelectableByMouse);
    firstRow->addWidget(m_first, 1);
    m_showFirst = new QPushButton(tr("&Select its agents"));
    m_showFirst->setToolTip(tr("Select, in the window, the agents of run A where the runs first part"));
    m_showFirst->setEnabled(false);
    firstRow->addWidget(m_showFirst, 0, Qt::AlignTop);
    layout->addLayout(firstRow);

    m_tree = new QTreeWidget;
    m_tree->setObjectName(QStringLiteral("diffTree"));
    m_tree->setColumnCount(3);
    m_tree->setHeaderLabels({tr("What"), tr("Run A"), tr("Run B")});
    m_tree->header()->setSectionResizeMode(0, QHeaderView::Stretch);
    m_tree->setMinimumSize(720, 380);
    m_tree->setAlternatingRowColors(true);
    layout->addWidget(m_tree, 1);

    auto *buttons = new QDialogButtonBox;
    m_save = buttons->addButton(tr("&Save JSON…"), QDialogButtonBox::ActionRole);
    m_save->setEnabled(false);
    buttons->addButton(QDialogButtonBox::Close);
    layout->addWidget(buttons);

    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(browse, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getOpenFileName(
            this, tr("Run B"), QFileInfo(m_tracePath).absolutePath(),
            tr("Traces and logs (*.jsonl *.jsonl.zst *.jsonl.gz *.ndjson *.ndjson.zst *.ndjson.gz *.json *.zst *.gz);;All files (*)"));
        if (!path.isEmpty())
            m_other->setText(path);
    });
    connect(m_compare, &QPushButton::clicked, this, &RunDiffDialog::compare);
    connect(m_showFirst, &QPushButton::clicked, this, [this] {
        QStringList ids;
        for (const Json &key : m_result["firstDivergence"].value("agents", Json::array()))
            if (const auto it = m_idOfKeyA.find(q(key)); it != m_idOfKeyA.end())
                ids << it->second;
        if (!ids.isEmpty())
            Q_EMIT showAgentsRequested(ids);
    });
    connect(m_save, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getSaveFileName(this, tr("Save comparison"), QStringLiteral("run-diff.json"), tr("JSON (*.json)"));
        if (path.isEmpty())
            return;
        QSaveFile f(path);
        const QByteArray text = QByteArray::fromStdString(m_result.dump(2)) + '\n';
        if (!f.open(QIODevice::WriteOnly) || f.write(text) != text.size() || !f.commit())
            m_verdict->setText(tr("Could not save %1: %2").arg(QDir::toNativeSeparators(path), f.errorString()));
    });
}

RunDiffDialog::~RunDiffDialog()
{
    stopWorker();
}

void RunDiffDialog::setOtherTrace(const QString &path)
{
    m_other->setText(path);
}

void RunDiffDialog::stopWorker()
{
    if (!m_worker)
        return;
    m_cancel->store(true);
    m_worker->wait();
    delete m_worker;
    m_worker = nullptr;
}

void RunDiffDialog::compare()
{
    const QString other = m_other->text().trimmed();
    if (other.isEmpty()) {
        m_verdict->setText(tr("Choose run B first."));
        return;
    }
    stopWorker();
    m_compare->setEnabled(false);
    m_showFirst->setEnabled(false);
    m_save->setEnabled(false);
    m_tree->clear();
    m_first->clear();
    m_verdict->setText(tr("Loading and comparing…"));

    // A live model is read here, in its own thread; a trace again from its file on the worker.
    std::shared_ptr<RunProfile> liveA;
    if (m_tracePath.isEmpty() && m_store)
        liveA = std::make_shared<RunProfile>(profileRun(*m_store, tr("live session")));
    m_cancel = std::make_shared<std::atomic<bool>>(false);
    QPointer<RunDiffDialog> self(this);
    const QString pathA = m_tracePath;
    auto cancel = m_cancel;
    m_worker = QThread::create([self, pathA, other, liveA, cancel] {
        QString error;
        Json result;
        std::map<QString, QString> idOfKeyA;
        TraceLoadOptions options;
        options.keepTimeline = false;
        options.cancel = cancel.get();
        SystemStore storeA, storeB;
        RunProfile a;
        if (liveA) {
            a = *liveA;
        } else {
            const TraceLoadResult r = loadTraceInto(storeA, pathA, options);
            if (!r.ok)
                error = r.error;
            a = profileRun(storeA, QFileInfo(pathA).fileName());
        }
        if (error.isEmpty() && !cancel->load()) {
            const TraceLoadResult r = loadTraceInto(storeB, other, options);
            if (!r.ok)
                error = r.error;
        }
        if (error.isEmpty() && !cancel->load()) {
            const RunProfile b = profileRun(storeB, QFileInfo(other).fileName());
            result = diffRuns(a, b, liveA ? nullptr : &storeA, &storeB);
            for (const RunProfile::AgentEntry &e : a.agents)
                idOfKeyA[e.key] = e.id;
        }
        if (cancel->load())
            return;
        QMetaObject::invokeMethod(
            QCoreApplication::instance(),
            [self, result, error, idOfKeyA] {
                if (!self)
                    return;
                self->m_idOfKeyA = idOfKeyA;
                self->showResult(result, error);
            },
            Qt::QueuedConnection);
    });
    m_worker->start();
}

void RunDiffDialog::showResult(const Json &result, const QString &error)
{
    if (m_worker) {
        m_worker->wait();
        delete m_worker;
        m_worker = nullptr;
    }
    m_compare->setEnabled(true);
    m_result = result;
    if (!error.isEmpty()) {
        m_verdict->setText(tr("Could not compare: %1").arg(error));
        Q_EMIT compared(false);
        return;
    }
    const bool equal = result.value("equal", false);
    m_verdict->setText(equal ? tr("The runs are equal: same agents, same conversations, same counts.")
                             : tr("The runs differ."));
    const Json &first = result["firstDivergence"];
    if (first.is_object()) {
        QStringList agents;
        for (const Json &k : first["agents"])
            agents << q(k);
        QString what;
        if (first["kind"] == Json("agent"))
            what = first.value("onlyIn", std::string()) == "a" ? tr("%1 registers in run A only").arg(agents.value(0))
                                                                : tr("%1 registers in run B only").arg(agents.value(0));
        else
            what = tr("message %1 of %2 → %3: %4 in run A, %5 in run B")
                       .arg(first.value("index", 0) + 1)
                       .arg(agents.value(0), agents.value(1),
                            first["messageA"].is_object() ? q(first["messageA"]["type"]) : tr("nothing"),
                            first["messageB"].is_object() ? q(first["messageB"]["type"]) : tr("nothing"));
        m_first->setText(tr("First divergence at %1 into the runs: %2.").arg(offsetText(first.value("offsetMs", qint64(0))), what));
        m_showFirst->setEnabled(true);
    } else {
        m_first->setText(equal ? QString() : tr("No divergence in agents or conversations; only counts differ."));
    }

    auto section = [this](const QString &title, qint64 count) {
        auto *item = new QTreeWidgetItem(m_tree, {QStringLiteral("%1 (%2)").arg(title).arg(count)});
        QFont f = item->font(0);
        f.setBold(true);
        item->setFont(0, f);
        return item;
    };
    auto *deltas = section(tr("Counts"), qint64(result["deltas"].size()));
    for (auto d = result["deltas"].begin(); d != result["deltas"].end(); ++d) {
        if (d.key() == "taskDurationMs") {
            const Json &t = d.value();
            new QTreeWidgetItem(deltas, {tr("task duration, mean (median)"),
                                         tr("%1 (%2)").arg(offsetText(qint64(t.value("meanA", 0.0))), offsetText(qint64(t.value("medianA", 0.0)))),
                                         tr("%1 (%2)").arg(offsetText(qint64(t.value("meanB", 0.0))), offsetText(qint64(t.value("medianB", 0.0))))});
            continue;
        }
        const Json &v = d.value();
        auto *item = new QTreeWidgetItem(deltas, {QString::fromStdString(d.key()), q(v["a"]), q(v["b"])});
        if (v["delta"] != Json(0) && v["delta"] != Json(0.0))
            item->setToolTip(2, tr("change: %1").arg(q(v["delta"])));
    }
    const Json &agents = result["agents"];
    auto *onlyA = section(tr("Agents only in run A"), agents.value("onlyACount", qint64(0)));
    for (const Json &e : agents["onlyA"])
        new QTreeWidgetItem(onlyA, {q(e["key"]), q(e["id"]), QString()});
    auto *onlyB = section(tr("Agents only in run B"), agents.value("onlyBCount", qint64(0)));
    for (const Json &e : agents["onlyB"])
        new QTreeWidgetItem(onlyB, {q(e["key"]), QString(), q(e["id"])});
    auto *changed = section(tr("Agents that changed"), agents.value("changedCount", qint64(0)));
    for (const Json &e : agents["changed"]) {
        QStringList names;
        for (auto f = e["fields"].begin(); f != e["fields"].end(); ++f)
            names << QString::fromStdString(f.key());
        auto *agent = new QTreeWidgetItem(changed, {tr("%1 — %2").arg(q(e["key"]), names.join(QStringLiteral(", "))), q(e["idA"]), q(e["idB"])});
        for (auto f = e["fields"].begin(); f != e["fields"].end(); ++f)
            new QTreeWidgetItem(agent, {QString::fromStdString(f.key()), q(f.value().at(0)), q(f.value().at(1))});
    }
    const Json &conversations = result["conversations"];
    auto *differing = section(tr("Conversations that differ"), conversations.value("differingCount", qint64(0)));
    for (const Json &c : conversations["differing"])
        new QTreeWidgetItem(differing, {tr("%1 → %2, from message %3").arg(q(c["from"]), q(c["to"])).arg(c.value("firstDifference", 0) + 1),
                                        tr("%1 (%2 messages)").arg(q(c["typeA"])).arg(c.value("lengthA", 0)),
                                        tr("%1 (%2 messages)").arg(q(c["typeB"])).arg(c.value("lengthB", 0))});
    auto *convOnlyA = section(tr("Conversations only in run A"), conversations.value("onlyACount", qint64(0)));
    for (const Json &c : conversations["onlyA"])
        new QTreeWidgetItem(convOnlyA, {tr("%1 → %2").arg(q(c.at(0)), q(c.at(1)))});
    auto *convOnlyB = section(tr("Conversations only in run B"), conversations.value("onlyBCount", qint64(0)));
    for (const Json &c : conversations["onlyB"])
        new QTreeWidgetItem(convOnlyB, {tr("%1 → %2").arg(q(c.at(0)), q(c.at(1)))});
    // Sections open when short enough to read; an agent's fields when few agents changed.
    for (int i = 0; i < m_tree->topLevelItemCount(); ++i) {
        QTreeWidgetItem *top = m_tree->topLevelItem(i);
        top->setExpanded(top == deltas || top->childCount() <= 12);
    }
    for (int i = 0; i < changed->childCount(); ++i)
        changed->child(i)->setExpanded(changed->childCount() <= 5);
    m_tree->resizeColumnToContents(1);
    m_tree->resizeColumnToContents(2);
    m_save->setEnabled(true);
    Q_EMIT compared(true);
}

} // namespace mapi::ui
