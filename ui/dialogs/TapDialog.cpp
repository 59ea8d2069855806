#include "dialogs/TapDialog.h"

#include "common/DialogButtons.h"

#include <QDateTime>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileInfo>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QStandardPaths>
#include <QVBoxLayout>

namespace mapi::ui {

TapDialog::TapDialog(const QString &upstream, QWidget *parent)
    : QDialog(parent)
    , m_upstream(new QLineEdit(upstream, this))
    , m_port(new QSpinBox(this))
    , m_trace(new QLineEdit(defaultTracePath(), this))
    , m_message(new QLabel(this))
{
    setWindowTitle(tr("Start a tap"));
    setObjectName(QStringLiteral("tapDialog"));
    m_upstream->setObjectName(QStringLiteral("tapUpstream"));
    m_upstream->setPlaceholderText(QStringLiteral("ws://127.0.0.1:8080  or  wss://map.example.org/ws"));
    m_port->setObjectName(QStringLiteral("tapPort"));
    m_port->setRange(0, 65535);
    m_port->setSpecialValueText(tr("any free port"));
    m_trace->setObjectName(QStringLiteral("tapTrace"));
    auto *browse = new QPushButton(tr("Browse…"), this);
    connect(browse, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getSaveFileName(this, tr("The tap's trace"), m_trace->text(),
                                                          tr("Traces (*.jsonl.zst *.jsonl.gz *.jsonl)"));
        if (!path.isEmpty())
            m_trace->setText(path);
    });
    auto *traceRow = new QHBoxLayout;
    traceRow->addWidget(m_trace, 1);
    traceRow->addWidget(browse);
    auto *form = new QFormLayout;
    form->addRow(tr("MAP server (upstream)"), m_upstream);
    form->addRow(tr("Listen on 127.0.0.1, port"), m_port);
    form->addRow(tr("Trace"), traceRow);
    auto *about = new QLabel(tr("Agents and clients connect to the tap instead of the server; it forwards every message "
                                "unchanged and records both directions of every connection. This window then observes "
                                "the system through it, with one lane per connection in the Connections panel."),
                             this);
    about->setWordWrap(true);
    m_message->setObjectName(QStringLiteral("tapMessage"));
    m_message->setWordWrap(true);
    m_message->setStyleSheet(QStringLiteral("color: #c00"));
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(about);
    layout->addLayout(form);
    layout->addWidget(m_message);
    layout->addWidget(okCancelButtons(this, tr("Start the tap")));
    resize(560, sizeHint().height());
}

QString TapDialog::defaultTracePath()
{
    const QString folder = QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + QStringLiteral("/taps");
    return QDir(folder).filePath(
        QStringLiteral("tap-%1.jsonl.zst").arg(QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss"))));
}

TapOptions TapDialog::options() const
{
    TapOptions options;
    options.upstream = QUrl(m_upstream->text().trimmed(), QUrl::StrictMode);
    options.listenPort = quint16(m_port->value());
    options.tracePath = m_trace->text().trimmed();
    return options;
}

void TapDialog::accept()
{
    const TapOptions chosen = options();
    if (const QString why = WebSocketTap::upstreamError(chosen.upstream); !why.isEmpty()) {
        m_message->setText(why);
        m_upstream->setFocus();
        return;
    }
    if (chosen.tracePath.isEmpty()) {
        m_message->setText(tr("Say where the trace goes: a tap that records nothing shows nothing later."));
        m_trace->setFocus();
        return;
    }
    QDir().mkpath(QFileInfo(chosen.tracePath).absolutePath());
    QDialog::accept();
}

} // namespace mapi::ui
