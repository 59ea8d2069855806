#include "dialogs/SupervisionDialog.h"

#include "common/DialogButtons.h"
#include "model/SystemStore.h"

#include <QCheckBox>
#include <QDialogButtonBox>
#include <QGridLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSpinBox>
#include <QVBoxLayout>

namespace mapi::ui {

namespace {

// Seconds; -1 shows as "never".
QSpinBox *delayBox(qint64 ms, QWidget *parent)
{
    auto *box = new QSpinBox(parent);
    box->setRange(-1, 24 * 3600);
    box->setSpecialValueText(SupervisionDialog::tr("never"));
    box->setSuffix(SupervisionDialog::tr(" s"));
    box->setValue(ms < 0 ? -1 : int(ms / 1000));
    return box;
}

} // namespace

SupervisionDialog::SupervisionDialog(const SupervisionLadder &ladder, const std::map<QString, Alert> &openAlerts,
                                     const SystemStore *store, bool observerOnly, const AlertGroup *storm, QWidget *parent)
    : QDialog(parent)
    , m_ladder(ladder)
    , m_openAlerts(openAlerts)
    , m_store(store)
{
    setObjectName(QStringLiteral("supervisionDialog"));
    setWindowTitle(tr("Supervise automatically"));
    auto *intro = new QLabel(observerOnly
                                 ? tr("<b>Observer only:</b> nothing acts automatically while this connection only observes.")
                                 : tr("While an alert of a ticked rule stays open, its agents get a nudge (a steering message), "
                                      "then are suspended, then stopped, each after its delay from when the alert was raised. "
                                      "It stops as soon as the alert clears. Every step is an operator action in the Actions "
                                      "panel, marked automatic; the alerts of a storm are acted on together. For this "
                                      "connection only: a new connection starts with everything off."),
                             this);
    intro->setWordWrap(true);

    auto *grid = new QGridLayout;
    const QStringList headers{tr("Rule"), tr("Nudge after"), tr("Suspend after"), tr("Stop after"), tr("Would act now on")};
    for (int c = 0; c < headers.size(); ++c) {
        auto *h = new QLabel(QStringLiteral("<b>%1</b>").arg(headers[c]), this);
        grid->addWidget(h, 0, c);
    }
    for (int k = 0; k < kAlertKindCount; ++k) {
        const AlertKind kind = AlertKind(k);
        const LadderPlan &plan = ladder.plan(kind);
        Row &row = m_rows[size_t(k)];
        row.enabled = new QCheckBox(alertKindName(kind), this);
        row.enabled->setObjectName(QStringLiteral("supervise-%1").arg(alertKindName(kind)));
        row.enabled->setChecked(plan.enabled);
        row.nudge = delayBox(plan.nudgeAfterMs, this);
        row.suspend = delayBox(plan.suspendAfterMs, this);
        row.stop = delayBox(plan.stopAfterMs, this);
        m_onlyGroups[size_t(k)] = plan.onlyGroups;
        row.preview = new QLabel(this);
        row.preview->setObjectName(QStringLiteral("preview-%1").arg(alertKindName(kind)));
        grid->addWidget(row.enabled, k + 1, 0);
        grid->addWidget(row.nudge, k + 1, 1);
        grid->addWidget(row.suspend, k + 1, 2);
        grid->addWidget(row.stop, k + 1, 3);
        grid->addWidget(row.preview, k + 1, 4);
        for (QWidget *w : std::initializer_list<QWidget *>{row.enabled, row.nudge, row.suspend, row.stop})
            w->setEnabled(!observerOnly);
    }
    grid->setColumnStretch(4, 1);

    QStringList limited;
    for (int k = 0; k < kAlertKindCount; ++k)
        if (!m_onlyGroups[size_t(k)].isEmpty())
            limited << tr("%1: %n storm(s)", nullptr, int(m_onlyGroups[size_t(k)].size())).arg(alertKindName(AlertKind(k)));
    if (!limited.isEmpty()) {
        m_keepLimits = new QCheckBox(tr("Keep the limits to storms (%1); untick to act on all of each rule's alerts")
                                         .arg(limited.join(QStringLiteral(", "))),
                                     this);
        m_keepLimits->setObjectName(QStringLiteral("superviseKeepLimits"));
        m_keepLimits->setChecked(true);
        m_keepLimits->setEnabled(!observerOnly);
        connect(m_keepLimits, &QCheckBox::toggled, this, [this] {
            for (int k = 0; k < kAlertKindCount; ++k)
                showPreview(AlertKind(k));
        });
    }
    if (storm) {
        m_stormKey = storm->key;
        m_stormKind = storm->kind;
        const LadderPlan &plan = ladder.plan(storm->kind);
        const bool allAlready = plan.enabled && plan.onlyGroups.isEmpty();
        m_stormOnly = new QCheckBox(tr("Only the storm “%1”: the rule's other alerts are left alone").arg(storm->title()), this);
        m_stormOnly->setObjectName(QStringLiteral("superviseStormOnly"));
        m_stormOnly->setChecked(!allAlready);
        m_stormOnly->setEnabled(!observerOnly);
        if (!observerOnly)
            m_rows[size_t(storm->kind)].enabled->setChecked(true);
        connect(m_stormOnly, &QCheckBox::toggled, this, [this] { showPreview(m_stormKind); });
    }
    for (int k = 0; k < kAlertKindCount; ++k)
        showPreview(AlertKind(k));

    m_nudgeText = new QLineEdit(ladder.plan(AlertKind::Stalled).nudgeText, this);
    m_nudgeText->setObjectName(QStringLiteral("nudgeText"));
    m_nudgeText->setEnabled(!observerOnly);
    auto *nudgeLabel = new QLabel(tr("Nudge text (%1 becomes the alert's reason):"), this);

    // Enter cancels: enabling automatic actions is never one keystroke away.
    QDialogButtonBox *buttons = okCancelButtons(this, tr("Apply"), true);

    auto *layout = new QVBoxLayout(this);
    layout->addWidget(intro);
    if (m_keepLimits)
        layout->addWidget(m_keepLimits);
    if (m_stormOnly)
        layout->addWidget(m_stormOnly);
    layout->addLayout(grid);
    layout->addWidget(nudgeLabel);
    layout->addWidget(m_nudgeText);
    layout->addWidget(buttons);
}

LadderPlan SupervisionDialog::plan(AlertKind kind) const
{
    const Row &row = m_rows[size_t(kind)];
    LadderPlan plan;
    plan.enabled = row.enabled->isChecked();
    auto ms = [](const QSpinBox *box) { return box->value() < 0 ? qint64(-1) : qint64(box->value()) * 1000; };
    plan.nudgeAfterMs = ms(row.nudge);
    plan.suspendAfterMs = ms(row.suspend);
    plan.stopAfterMs = ms(row.stop);
    plan.nudgeText = m_nudgeText->text();
    if (plan.enabled) // a rule switched off forgets its limits
        plan.onlyGroups = onlyGroups(kind);
    return plan;
}

QStringList SupervisionDialog::onlyGroups(AlertKind kind) const
{
    if (m_stormOnly && kind == m_stormKind && !m_stormOnly->isChecked())
        return {}; // the storm's rule, unticked "only the storm": all of its alerts
    QStringList groups = m_keepLimits && m_keepLimits->isChecked() ? m_onlyGroups[size_t(kind)] : QStringList();
    if (m_stormOnly && kind == m_stormKind && !groups.contains(m_stormKey))
        groups << m_stormKey;
    return groups;
}

// Who the rule would act on now, as the dialog sets it.
void SupervisionDialog::showPreview(AlertKind kind)
{
    const QStringList groups = onlyGroups(kind);
    const QStringList agents = m_ladder.preview(kind, m_openAlerts, groups);
    QStringList names;
    for (const QString &id : agents.mid(0, 5))
        names << m_store->agentName(id);
    if (agents.size() > 5)
        names << tr("%1 more").arg(agents.size() - 5);
    QString text = names.isEmpty() ? tr("no open alert") : names.join(QStringLiteral(", "));
    if (!groups.isEmpty())
        text = tr("%n storm(s): %1", nullptr, int(groups.size())).arg(text);
    m_rows[size_t(kind)].preview->setText(text);
}

} // namespace mapi::ui
