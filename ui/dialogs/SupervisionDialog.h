// Alerts → Supervise automatically…: which rules may act by themselves on this connection, and
// how (SupervisionLadder): a nudge, then suspend, then stop, each after a delay while the alert
// stays open. Each rule shows who it would act on now. Nothing is enabled until the operator
// ticks it here; a new connection starts with everything off; observer mode disables it all.
// Opened on a storm (a group row of the inbox selected): its rule comes ticked, limited to that
// storm ("Only the storm …", LadderPlan::onlyGroups) unless the rule already acts on all its
// alerts; still nothing happens before Apply. Rules limited to storms before keep their limits
// unless "Keep the limits to storms" is unticked (then they act on all their alerts again).
// Thread: GUI thread.
#pragma once

#include "alerts/AlertGroups.h"
#include "alerts/SupervisionLadder.h"

#include <QDialog>

#include <array>

class QCheckBox;
class QLabel;
class QLineEdit;
class QSpinBox;

namespace mapi {
class SystemStore;
}

namespace mapi::ui {

class SupervisionDialog : public QDialog
{
    Q_OBJECT
public:
    SupervisionDialog(const SupervisionLadder &ladder, const std::map<QString, Alert> &openAlerts, const SystemStore *store,
                      bool observerOnly, const AlertGroup *storm = nullptr, QWidget *parent = nullptr);

    // The plans as the dialog sets them (read after accept()).
    LadderPlan plan(AlertKind kind) const;

private:
    struct Row
    {
        QCheckBox *enabled = nullptr;
        QSpinBox *nudge = nullptr;
        QSpinBox *suspend = nullptr;
        QSpinBox *stop = nullptr;
        QLabel *preview = nullptr;
    };
    QStringList onlyGroups(AlertKind kind) const; // the plan's groups as the storm's box sets them
    void showPreview(AlertKind kind);

    std::array<Row, kAlertKindCount> m_rows{};
    std::array<QStringList, kAlertKindCount> m_onlyGroups{}; // each plan's, as it was
    QLineEdit *m_nudgeText = nullptr;
    QCheckBox *m_stormOnly = nullptr; // null: not opened on a storm
    QCheckBox *m_keepLimits = nullptr; // null: no plan was limited to storms
    QString m_stormKey;
    AlertKind m_stormKind = AlertKind::Stalled;
    const SupervisionLadder &m_ladder;
    const std::map<QString, Alert> &m_openAlerts;
    const SystemStore *m_store;
};

} // namespace mapi::ui
