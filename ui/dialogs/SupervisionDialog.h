// Alerts → Supervise automatically…: which rules may act by themselves on this connection, and
// how (SupervisionLadder): a nudge, then suspend, then stop, each after a delay while the alert
// stays open. Each rule shows who it would act on now. Nothing is enabled until the operator
// ticks it here; a new connection starts with everything off; observer mode disables it all.
// Thread: GUI thread.
#pragma once

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
                      bool observerOnly, QWidget *parent = nullptr);

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
    std::array<Row, kAlertKindCount> m_rows{};
    QLineEdit *m_nudgeText = nullptr;
};

} // namespace mapi::ui
