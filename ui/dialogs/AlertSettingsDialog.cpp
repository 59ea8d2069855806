#include "dialogs/AlertSettingsDialog.h"

#include "alerts/AlertWebhook.h"
#include "common/DialogButtons.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPushButton>
#include <QScrollArea>
#include <QTabWidget>
#include <QUrl>
#include <QVBoxLayout>

#include <cmath>
#include <optional>

namespace mapi::ui {

namespace {

// What each key of the rules file is called in the form (the file's key is in the tooltip).
QString labelOf(const std::string &key)
{
    static const std::pair<const char *, const char *> labels[] = {
        {"heartbeatIntervalS", QT_TRANSLATE_NOOP("AlertSettingsDialog", "Heartbeat interval (s)")},
        {"afterIntervals", QT_TRANSLATE_NOOP("AlertSettingsDialog", "After heartbeats missed")},
        {"exchanges", QT_TRANSLATE_NOOP("AlertSettingsDialog", "Exchanges")},
        {"windowS", QT_TRANSLATE_NOOP("AlertSettingsDialog", "Within (s)")},
        {"rateFactor", QT_TRANSLATE_NOOP("AlertSettingsDialog", "Or rate × usual")},
        {"rateMinMessages", QT_TRANSLATE_NOOP("AlertSettingsDialog", "Rate: at least messages")},
        {"rateBaselineWindows", QT_TRANSLATE_NOOP("AlertSettingsDialog", "Rate: windows to learn usual")},
        {"afterS", QT_TRANSLATE_NOOP("AlertSettingsDialog", "After (s)")},
        {"usdPerAgent", QT_TRANSLATE_NOOP("AlertSettingsDialog", "USD per agent (0: no limit)")},
        {"usdPerRole", QT_TRANSLATE_NOOP("AlertSettingsDialog", "USD per role (role=amount, …)")},
        {"usdPerSubtree", QT_TRANSLATE_NOOP("AlertSettingsDialog", "USD per subtree (0: off)")},
        {"tokensPerAgent", QT_TRANSLATE_NOOP("AlertSettingsDialog", "Tokens per agent (0: off)")},
        {"usdPerHour", QT_TRANSLATE_NOOP("AlertSettingsDialog", "USD per hour (0: off)")},
        {"rateWindowS", QT_TRANSLATE_NOOP("AlertSettingsDialog", "Rate over (s)")},
        {"count", QT_TRANSLATE_NOOP("AlertSettingsDialog", "Reports from one agent")},
        {"systemCount", QT_TRANSLATE_NOOP("AlertSettingsDialog", "Reports across agents (0: off)")},
        {"minSeverity", QT_TRANSLATE_NOOP("AlertSettingsDialog", "Counting from severity")},
    };
    for (const auto &[k, text] : labels)
        if (key == k)
            return AlertSettingsDialog::tr(text);
    return QString::fromStdString(key);
}

// "researcher=5, writer=2.5" ↔ {"researcher": 5, "writer": 2.5}; nullopt: not that form.
std::optional<Json> rolesFromText(const QString &text)
{
    Json roles = Json::object();
    for (const QString &part : text.split(u',', Qt::SkipEmptyParts)) {
        const int equals = part.indexOf(u'=');
        if (equals <= 0)
            return std::nullopt;
        bool ok = false;
        const double amount = part.mid(equals + 1).trimmed().toDouble(&ok);
        const QString role = part.left(equals).trimmed();
        if (!ok || role.isEmpty())
            return std::nullopt;
        roles[role.toStdString()] = amount;
    }
    return roles;
}

QString rolesToText(const Json &roles)
{
    QStringList parts;
    for (auto it = roles.begin(); it != roles.end(); ++it)
        parts << QStringLiteral("%1=%2").arg(QString::fromStdString(it.key()),
                                             QString::number(it.value().get<double>(), 'g', QLocale::FloatingPointShortest));
    return parts.join(QStringLiteral(", "));
}

} // namespace

AlertSettingsDialog::AlertSettingsDialog(const AlertRules &rules, const QString &rulesPath, const AlertDelivery &delivery,
                                         QWidget *parent)
    : QDialog(parent)
    , m_accepted(rules)
    , m_grouping(alertRulesToJson(rules)["grouping"])
{
    setObjectName(QStringLiteral("alertSettingsDialog"));
    setWindowTitle(tr("Alert settings"));
    auto *tabs = new QTabWidget(this);
    tabs->setObjectName(QStringLiteral("alertSettingsTabs"));

    auto *rulesPage = new QWidget;
    buildRules(rulesPage, alertRulesToJson(rules));
    auto *scroll = new QScrollArea;
    scroll->setWidget(rulesPage);
    scroll->setWidgetResizable(true);
    auto *rulesTab = new QWidget;
    auto *rulesLayout = new QVBoxLayout(rulesTab);
    auto *where = new QLabel(tr("Saved to %1 (the rules file format: docs/alerts.md). An alert is raised when a rule's "
                                "condition holds and cleared when it no longer does.")
                                 .arg(rulesPath.toHtmlEscaped()),
                             rulesTab);
    where->setWordWrap(true);
    where->setTextInteractionFlags(Qt::TextSelectableByMouse);
    rulesLayout->addWidget(where);
    rulesLayout->addWidget(scroll, 1);
    auto *defaults = new QPushButton(tr("Restore the defaults"), rulesTab);
    defaults->setObjectName(QStringLiteral("alertRulesDefaults"));
    connect(defaults, &QPushButton::clicked, this, [this] { setForm(alertRulesToJson(AlertRules())); });
    rulesLayout->addWidget(defaults, 0, Qt::AlignLeft);
    tabs->addTab(rulesTab, tr("Rules"));
    tabs->addTab(buildDelivery(delivery), tr("Notifications"));

    m_error = new QLabel(this);
    m_error->setObjectName(QStringLiteral("alertSettingsError"));
    m_error->setWordWrap(true);
    m_error->setStyleSheet(QStringLiteral("color: palette(highlighted-text); background: #b3261e; padding: 4px;"));
    m_error->hide();

    QDialogButtonBox *buttons = okCancelButtons(this, tr("Save"));
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(tabs, 1);
    layout->addWidget(m_error);
    layout->addWidget(buttons);
    const int em = fontMetrics().horizontalAdvance(QLatin1Char('m'));
    resize(48 * em, 44 * em);
}

void AlertSettingsDialog::buildRules(QWidget *page, const Json &values)
{
    auto *layout = new QVBoxLayout(page);
    auto makeEditor = [](const Json &value, const QString &objectName) -> QWidget * {
        QWidget *editor = nullptr;
        if (value.is_boolean()) {
            editor = new QCheckBox;
        } else if (value.is_number_integer()) { // counts and tokens: whole numbers past 2^31 too
            auto *spin = new QDoubleSpinBox;
            spin->setRange(0, 1e15);
            spin->setDecimals(0);
            spin->setGroupSeparatorShown(true);
            spin->setProperty("wholeNumber", true);
            editor = spin;
        } else if (value.is_number()) {
            auto *spin = new QDoubleSpinBox;
            spin->setRange(0, 1e9);
            spin->setDecimals(3); // the file's seconds and amounts: a millisecond, a tenth of a cent
            editor = spin;
        } else if (value.is_object()) {
            auto *line = new QLineEdit;
            line->setPlaceholderText(AlertSettingsDialog::tr("none: every role has the per-agent limit"));
            editor = line;
        } else {
            editor = new QComboBox; // severities
        }
        editor->setObjectName(objectName);
        return editor;
    };
    auto *general = new QFormLayout;
    QWidget *heartbeat = makeEditor(values["heartbeatIntervalS"], QStringLiteral("rule.heartbeatIntervalS"));
    heartbeat->setToolTip(tr("How often agents send heartbeats (seed 000: 30 s); used by \"unresponsive\". File key: heartbeatIntervalS"));
    general->addRow(labelOf("heartbeatIntervalS"), heartbeat);
    m_fields.push_back({QString(), "heartbeatIntervalS", heartbeat});
    layout->addLayout(general);
    for (int k = 0; k < kAlertKindCount; ++k) {
        const QString name = alertKindName(AlertKind(k));
        const Json &rule = values["rules"][name.toStdString()];
        auto *group = new QGroupBox(name);
        group->setObjectName(QStringLiteral("rule.%1").arg(name));
        group->setCheckable(true);
        auto *form = new QFormLayout(group);
        m_fields.push_back({name, "enabled", group});
        for (const QString &key : QStringList{QStringLiteral("severity")} + alertRuleKeys(AlertKind(k))) {
            const std::string field = key.toStdString();
            QWidget *editor = makeEditor(rule[field], QStringLiteral("rule.%1.%2").arg(name, key));
            if (auto *combo = qobject_cast<QComboBox *>(editor)) {
                if (field == "severity")
                    combo->addItems({QStringLiteral("info"), QStringLiteral("warning"), QStringLiteral("critical")});
                else
                    combo->addItems({QStringLiteral("ERROR"), QStringLiteral("CRITICAL")});
            }
            editor->setToolTip(tr("File key: rules.%1.%2").arg(name, key));
            form->addRow(field == "severity" ? tr("Severity") : labelOf(field), editor);
            m_fields.push_back({name, field, editor});
        }
        layout->addWidget(group);
    }
    layout->addStretch(1);
    setForm(values);
}

void AlertSettingsDialog::setForm(const Json &values)
{
    if (values.contains("grouping"))
        m_grouping = values["grouping"];
    for (const Field &f : m_fields) {
        const Json &value = f.rule.isEmpty() ? values[f.key] : values["rules"][f.rule.toStdString()][f.key];
        if (auto *group = qobject_cast<QGroupBox *>(f.editor))
            group->setChecked(value.get<bool>());
        else if (auto *dspin = qobject_cast<QDoubleSpinBox *>(f.editor))
            dspin->setValue(value.get<double>());
        else if (auto *line = qobject_cast<QLineEdit *>(f.editor))
            line->setText(rolesToText(value));
        else if (auto *combo = qobject_cast<QComboBox *>(f.editor))
            combo->setCurrentText(QString::fromStdString(value.get<std::string>()));
    }
}

Json AlertSettingsDialog::formJson() const
{
    // The grouping has no fields here (it is edited in the rules file): kept as it came, so that
    // saving the form does not put the defaults over it; "Restore the defaults" restores it too.
    Json out = {{"version", 1}, {"rules", Json::object()}, {"grouping", m_grouping}};
    for (const Field &f : m_fields) {
        Json value;
        if (auto *group = qobject_cast<QGroupBox *>(f.editor))
            value = group->isChecked();
        else if (auto *dspin = qobject_cast<QDoubleSpinBox *>(f.editor))
            value = dspin->property("wholeNumber").toBool() ? Json(qint64(std::llround(dspin->value()))) : Json(dspin->value());
        else if (auto *line = qobject_cast<QLineEdit *>(f.editor))
            value = rolesFromText(line->text()).value_or(Json(line->text().toStdString())); // a string: refused, named
        else if (auto *combo = qobject_cast<QComboBox *>(f.editor))
            value = combo->currentText().toStdString();
        if (f.rule.isEmpty())
            out[f.key] = value;
        else
            out["rules"][f.rule.toStdString()][f.key] = value;
    }
    return out;
}

QWidget *AlertSettingsDialog::buildDelivery(const AlertDelivery &delivery)
{
    auto *page = new QWidget;
    auto *layout = new QVBoxLayout(page);
    m_desktop = new QCheckBox(tr("Desktop notifications when the window is not in front (at most one every 10 s)"), page);
    m_desktop->setObjectName(QStringLiteral("alertDesktop"));
    m_desktop->setChecked(delivery.desktop);
    m_sound = new QCheckBox(tr("With a sound"), page);
    m_sound->setObjectName(QStringLiteral("alertSound"));
    m_sound->setChecked(delivery.sound);
    layout->addWidget(m_desktop);
    layout->addWidget(m_sound);

    auto *hook = new QGroupBox(tr("Webhook"), page);
    auto *form = new QFormLayout(hook);
    m_webhookOn = new QCheckBox(tr("POST each alert raised and cleared as JSON"), hook);
    m_webhookOn->setObjectName(QStringLiteral("webhookOn"));
    m_webhookOn->setChecked(delivery.webhookOn);
    m_webhookUrl = new QLineEdit(delivery.webhookUrl, hook);
    m_webhookUrl->setObjectName(QStringLiteral("webhookUrl"));
    m_webhookUrl->setPlaceholderText(QStringLiteral("https://…"));
    m_webhookToken = new QLineEdit(delivery.webhookToken, hook);
    m_webhookToken->setObjectName(QStringLiteral("webhookToken"));
    m_webhookToken->setEchoMode(QLineEdit::Password);
    m_webhookToken->setPlaceholderText(tr("optional: sent as Authorization: Bearer …"));
    m_webhookSeverity = new QComboBox(hook);
    m_webhookSeverity->setObjectName(QStringLiteral("webhookSeverity"));
    m_webhookSeverity->addItems({QStringLiteral("info"), QStringLiteral("warning"), QStringLiteral("critical")});
    m_webhookSeverity->setCurrentIndex(int(delivery.webhookMinSeverity));
    auto *test = new QPushButton(tr("Send a test"), hook);
    test->setObjectName(QStringLiteral("webhookTest"));
    m_webhookResult = new QLabel(hook);
    m_webhookResult->setObjectName(QStringLiteral("webhookResult"));
    m_webhookResult->setWordWrap(true);
    connect(test, &QPushButton::clicked, this, [this] {
        const QString why = AlertWebhook::checkUrl(QUrl(m_webhookUrl->text().trimmed()), m_webhookToken->text());
        if (!why.isEmpty()) {
            m_webhookResult->setText(tr("Address: %1").arg(why));
            return;
        }
        m_webhookResult->setText(tr("Sending…"));
        Q_EMIT testWebhookRequested(m_webhookUrl->text().trimmed(), m_webhookToken->text());
    });
    auto *secrets = new QLabel(tr("The address and the token are kept in the OS keychain, never in the settings file: "
                                  "an address often holds a key."),
                               hook);
    secrets->setWordWrap(true);
    form->addRow(m_webhookOn);
    form->addRow(tr("Address"), m_webhookUrl);
    form->addRow(tr("Token"), m_webhookToken);
    form->addRow(tr("From severity"), m_webhookSeverity);
    form->addRow(test, m_webhookResult);
    form->addRow(secrets);
    layout->addWidget(hook);
    layout->addStretch(1);
    return page;
}

AlertDelivery AlertSettingsDialog::delivery() const
{
    AlertDelivery d;
    d.desktop = m_desktop->isChecked();
    d.sound = m_sound->isChecked();
    d.webhookOn = m_webhookOn->isChecked();
    d.webhookUrl = m_webhookUrl->text().trimmed();
    d.webhookToken = m_webhookToken->text();
    d.webhookMinSeverity = AlertSeverity(m_webhookSeverity->currentIndex());
    return d;
}

void AlertSettingsDialog::showWebhookTestResult(bool ok, const QString &detail)
{
    m_webhookResult->setText(ok ? tr("Delivered: %1").arg(detail) : tr("Not delivered: %1").arg(detail));
}

void AlertSettingsDialog::accept()
{
    const ErrorOr<AlertRules> rules = alertRulesFromJson(formJson());
    QString why = rules ? QString() : rules.error();
    if (why.isEmpty() && m_webhookOn->isChecked()) {
        const QString url = AlertWebhook::checkUrl(QUrl(m_webhookUrl->text().trimmed()), m_webhookToken->text());
        if (!url.isEmpty())
            why = tr("Webhook address: %1").arg(url);
    }
    if (!why.isEmpty()) {
        m_error->setText(why);
        m_error->show();
        return;
    }
    m_accepted = *rules;
    QDialog::accept();
}

} // namespace mapi::ui
