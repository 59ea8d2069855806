#include "dialogs/ActionDialogs.h"

#include "common/DialogButtons.h"

#include "model/SystemStore.h"

#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QVBoxLayout>

namespace mapi::ui {

QString agentLabel(const SystemStore *store, const QString &id)
{
    const Agent *a = store ? store->agent(id) : nullptr;
    const QString shortId = id.size() > 10 ? QStringLiteral("…") + id.right(6) : id;
    if (!a || a->name.isEmpty())
        return id;
    return a->role.isEmpty() ? QStringLiteral("%1 · %2").arg(a->name, shortId)
                             : QStringLiteral("%1 (%2) · %3").arg(a->name, a->role, shortId);
}

static QLabel *noteLabel(const QString &note, QWidget *parent)
{
    auto *label = new QLabel(note, parent);
    label->setWordWrap(true);
    label->setVisible(!note.isEmpty());
    QFont f = label->font();
    f.setItalic(true);
    label->setFont(f);
    return label;
}

InjectDialog::InjectDialog(const SystemStore *store, const QStringList &agentIds, const QString &note, QWidget *parent)
    : QDialog(parent)
{
    setWindowTitle(tr("Steer %n agent(s)", nullptr, int(agentIds.size())));
    auto *targets = new QListWidget(this);
    for (const QString &id : agentIds)
        targets->addItem(agentLabel(store, id));
    targets->setMaximumHeight(110);
    targets->setFocusPolicy(Qt::NoFocus); // read-only: what the operator types goes to the message
    m_text = new QPlainTextEdit(this);
    m_text->setObjectName(QStringLiteral("injectMessage"));
    m_text->setPlaceholderText(tr("Instruction for the agent(s), e.g. \"Stop the refactor and write tests first.\""));
    m_asJson = new QCheckBox(tr("Send as JSON"), this);
    m_delivery = new QComboBox(this);
    m_delivery->addItem(tr("Interrupt (now)"), int(MapClient::Delivery::Interrupt));
    m_delivery->addItem(tr("Queue (after the current step)"), int(MapClient::Delivery::Queue));
    m_delivery->addItem(tr("Best effort"), int(MapClient::Delivery::BestEffort));
    m_delivery->setCurrentIndex(1);
    m_error = new QLabel(this);
    m_error->setStyleSheet(QStringLiteral("color: #d0312d"));

    auto *form = new QFormLayout;
    form->addRow(tr("Targets"), targets);
    form->addRow(tr("Message"), m_text);
    form->addRow(QString(), m_asJson);
    form->addRow(tr("Delivery"), m_delivery);
    QDialogButtonBox *buttons = okCancelButtons(this, tr("Inject"));
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(noteLabel(note, this));
    layout->addWidget(m_error);
    layout->addWidget(buttons);
    resize(520, 380);
    m_text->setFocus(); // Ctrl+I, then type: the text lands in the message
}

Json InjectDialog::content() const
{
    return m_content;
}

MapClient::Delivery InjectDialog::delivery() const
{
    return MapClient::Delivery(m_delivery->currentData().toInt());
}

void InjectDialog::accept()
{
    const QString text = m_text->toPlainText().trimmed();
    if (text.isEmpty()) {
        m_error->setText(tr("Write the message to inject."));
        return;
    }
    if (m_asJson->isChecked()) {
        const std::string utf8 = text.toStdString();
        Json parsed = Json::parse(utf8, nullptr, false);
        if (parsed.is_discarded()) {
            m_error->setText(tr("This is not valid JSON."));
            return;
        }
        m_content = std::move(parsed);
    } else {
        m_content = text.toStdString();
    }
    QDialog::accept();
}

ConfirmActionDialog::ConfirmActionDialog(const SystemStore *store, const QString &verb, const QStringList &selection,
                                         const QString &note, QWidget *parent)
    : QDialog(parent)
    , m_store(store)
    , m_selection(selection)
{
    setWindowTitle(tr("%1 agents").arg(verb));
    m_summary = new QLabel(this);
    m_subtree = new QCheckBox(tr("Include every descendant (whole subtree)"), this);
    m_list = new QListWidget(this);
    m_reason = new QLineEdit(this);
    m_reason->setPlaceholderText(tr("optional, sent to the server"));
    QDialogButtonBox *buttons = okCancelButtons(this, verb, /*cancelIsDefault=*/true); // no surprise actions on Enter
    connect(m_subtree, &QCheckBox::toggled, this, &ConfirmActionDialog::refresh);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_summary);
    layout->addWidget(m_list);
    layout->addWidget(m_subtree);
    auto *form = new QFormLayout;
    form->addRow(tr("Reason"), m_reason);
    layout->addLayout(form);
    layout->addWidget(noteLabel(note, this));
    layout->addWidget(buttons);
    refresh();
    resize(480, 400);
}

void ConfirmActionDialog::refresh()
{
    m_targets.clear();
    for (const QString &id : std::as_const(m_selection)) {
        const QStringList ids = m_subtree->isChecked() ? m_store->subtree(id) : QStringList{id};
        for (const QString &t : ids)
            if (!m_targets.contains(t))
                m_targets << t;
    }
    m_list->clear();
    for (const QString &id : std::as_const(m_targets))
        m_list->addItem(agentLabel(m_store, id));
    m_summary->setText(tr("This affects %n agent(s):", nullptr, int(m_targets.size())));
}

QString ConfirmActionDialog::reason() const
{
    return m_reason->text().trimmed();
}


} // namespace mapi::ui
