#include "dialogs/RecoverDialog.h"

#include <QDateTime>
#include <QDialogButtonBox>
#include <QDir>
#include <QLabel>
#include <QListWidget>
#include <QLocale>
#include <QPushButton>
#include <QVBoxLayout>

namespace mapi::ui {

RecoverDialog::RecoverDialog(const QString &sessionsRoot, QWidget *parent)
    : QDialog(parent)
    , m_root(sessionsRoot)
{
    setWindowTitle(tr("Sessions that did not close"));
    auto *layout = new QVBoxLayout(this);
    auto *intro = new QLabel(tr("These live sessions ended without closing (a crash, a kill, a power cut). "
                                "Their journals hold what they received; open one as a trace, or delete it."));
    intro->setWordWrap(true);
    layout->addWidget(intro);
    m_list = new QListWidget;
    m_list->setMinimumWidth(560);
    layout->addWidget(m_list);
    auto *buttons = new QDialogButtonBox;
    m_open = buttons->addButton(tr("&Open as trace"), QDialogButtonBox::AcceptRole);
    m_delete = buttons->addButton(tr("&Delete"), QDialogButtonBox::DestructiveRole);
    buttons->addButton(tr("&Later"), QDialogButtonBox::RejectRole);
    layout->addWidget(buttons);
    connect(m_open, &QPushButton::clicked, this, [this] {
        const int row = m_list->currentRow();
        if (row < 0 || row >= m_sessions.size())
            return;
        Q_EMIT openRequested(m_sessions[row].parts);
        accept();
    });
    connect(m_delete, &QPushButton::clicked, this, [this] {
        const int row = m_list->currentRow();
        if (row < 0 || row >= m_sessions.size())
            return;
        QDir(m_sessions[row].folder).removeRecursively();
        refresh();
    });
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_list, &QListWidget::currentRowChanged, this, [this](int row) {
        m_open->setEnabled(row >= 0);
        m_delete->setEnabled(row >= 0);
    });
    refresh();
}

QString RecoverDialog::describe(const JournalInfo &info)
{
    const QLocale locale;
    const QString from = locale.toString(QDateTime::fromMSecsSinceEpoch(info.startedAtMs), QLocale::ShortFormat);
    const QString to = locale.toString(QDateTime::fromMSecsSinceEpoch(info.lastWriteMs).time(), QLocale::ShortFormat);
    return tr("%1 — %2 to %3 — %4").arg(info.url.isEmpty() ? tr("unknown server") : info.url, from, to,
                                         locale.formattedDataSize(info.bytes));
}

void RecoverDialog::refresh()
{
    m_sessions = SessionJournal::abandonedSessions(m_root);
    m_list->clear();
    for (const JournalInfo &info : std::as_const(m_sessions))
        m_list->addItem(describe(info));
    m_list->setCurrentRow(m_sessions.isEmpty() ? -1 : 0);
    m_open->setEnabled(!m_sessions.isEmpty());
    m_delete->setEnabled(!m_sessions.isEmpty());
}

int RecoverDialog::sessionCount() const
{
    return int(m_sessions.size());
}

QString RecoverDialog::folderAt(int row) const
{
    return row >= 0 && row < m_sessions.size() ? m_sessions[row].folder : QString();
}

} // namespace mapi::ui
