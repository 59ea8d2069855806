#include "dialogs/ConnectDialog.h"

#include "client/StreamTransports.h"
#include "common/Redaction.h"
#include "common/DialogButtons.h"
#include "telemetry/OtlpHttpSender.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QUrl>
#include <QVBoxLayout>

namespace mapi::ui {

ConnectDialog::ConnectDialog(QWidget *parent)
    : QDialog(parent)
{
    setWindowTitle(tr("Connect to a MAP system"));
    m_profiles = ConnectionProfiles::load();

    m_profile = new QComboBox(this);
    m_profile->setObjectName(QStringLiteral("profile"));
    m_profile->addItem(tr("(new profile)"));
    for (const auto &p : std::as_const(m_profiles))
        m_profile->addItem(p.name);
    m_name = new QLineEdit(this);
    m_name->setObjectName(QStringLiteral("profileName"));
    m_name->setPlaceholderText(tr("e.g. staging swarm"));
    m_url = new QComboBox(this);
    m_url->setObjectName(QStringLiteral("url"));
    m_url->setEditable(true);
    m_url->addItems(ConnectionProfiles::recentServers());
    m_url->setCurrentText(QString());
    m_url->lineEdit()->setPlaceholderText(QStringLiteral("ws://127.0.0.1:8080  ·  unix:/run/map.sock"));
    m_launch = new QLineEdit(this);
    m_launch->setObjectName(QStringLiteral("launchCommand"));
    m_launch->setPlaceholderText(tr("or a command: node my-system.mjs --stdio (MAP on its stdin/stdout)"));
    m_launch->setToolTip(tr("The console starts this command, speaks MAP (NDJSON) on its stdin and stdout, shows its "
                            "standard error in the Process output panel, and ends it when you disconnect. It is not "
                            "started again unless you connect again."));
    m_auth = new QComboBox(this);
    m_auth->setObjectName(QStringLiteral("authMethod"));
    m_auth->addItem(tr("None"), QStringLiteral("none"));
    m_auth->addItem(tr("API key"), QStringLiteral("api-key"));
    m_auth->addItem(tr("Bearer token"), QStringLiteral("bearer"));
    m_token = new QLineEdit(this);
    m_token->setObjectName(QStringLiteral("token"));
    m_token->setEchoMode(QLineEdit::Password);
    m_token->setPlaceholderText(tr("kept in memory; in the OS keychain only if you tick the box"));
    m_remember = new QCheckBox(tr("Remember the token in the OS keychain"), this);
    m_remember->setObjectName(QStringLiteral("rememberToken"));
    m_observer = new QCheckBox(tr("Observer only (disable every control action)"), this);
    m_observer->setObjectName(QStringLiteral("observerOnly"));
    m_message = new QLabel(this);
    m_message->setWordWrap(true);

    auto *otlp = new QGroupBox(tr("Send to OpenTelemetry"), this);
    otlp->setObjectName(QStringLiteral("otlpGroup"));
    otlp->setToolTip(tr("While connected, send the live model as OpenTelemetry spans (OTLP/HTTP, JSON) to a receiver such as "
                        "an OpenTelemetry Collector: agents, messages, tasks and alerts, every few seconds."));
    m_otlpEndpoint = new QLineEdit(otlp);
    m_otlpEndpoint->setObjectName(QStringLiteral("otlpEndpoint"));
    m_otlpEndpoint->setPlaceholderText(tr("e.g. http://127.0.0.1:4318 (empty: not sent)"));
    m_otlpHeaderName = new QLineEdit(otlp);
    m_otlpHeaderName->setObjectName(QStringLiteral("otlpHeaderName"));
    m_otlpHeaderName->setPlaceholderText(tr("optional, e.g. x-api-key"));
    m_otlpHeaderValue = new QLineEdit(otlp);
    m_otlpHeaderValue->setObjectName(QStringLiteral("otlpHeaderValue"));
    m_otlpHeaderValue->setEchoMode(QLineEdit::Password);
    m_otlpHeaderValue->setPlaceholderText(tr("kept with the profile in the OS keychain"));
    m_otlpMessage = new QLabel(otlp);
    m_otlpMessage->setObjectName(QStringLiteral("otlpMessage"));
    m_otlpMessage->setWordWrap(true);
    m_otlpMessage->hide();
    auto *otlpForm = new QFormLayout(otlp);
    otlpForm->addRow(tr("Receiver"), m_otlpEndpoint);
    otlpForm->addRow(QString(), m_otlpMessage);
    otlpForm->addRow(tr("Header name"), m_otlpHeaderName);
    otlpForm->addRow(tr("Header value"), m_otlpHeaderValue);

    auto *form = new QFormLayout;
    form->addRow(tr("Profile"), m_profile);
    form->addRow(tr("Name"), m_name);
    form->addRow(tr("Server URL"), m_url);
    form->addRow(tr("Launch a command"), m_launch);
    form->addRow(tr("Authentication"), m_auth);
    form->addRow(tr("Token"), m_token);
    form->addRow(QString(), m_remember);
    form->addRow(QString(), m_observer);

    QDialogButtonBox *buttons = okCancelButtons(this, tr("Connect"));
    m_connectButton = buttons->button(QDialogButtonBox::Ok);

    auto *layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(otlp);
    layout->addWidget(m_message);
    layout->addWidget(buttons);

    connect(m_profile, &QComboBox::currentIndexChanged, this, &ConnectDialog::loadProfile);
    connect(m_auth, &QComboBox::currentIndexChanged, this, &ConnectDialog::updateState);
    connect(m_url, &QComboBox::currentTextChanged, this, &ConnectDialog::updateState);
    connect(m_launch, &QLineEdit::textChanged, this, &ConnectDialog::updateState);
    for (QLineEdit *field : {m_otlpEndpoint, m_otlpHeaderName, m_otlpHeaderValue})
        connect(field, &QLineEdit::textChanged, this, &ConnectDialog::updateState);
    updateState();
    // The profile used last comes preselected: reconnecting is Enter.
    if (const int last = m_profile->findText(ConnectionProfiles::lastProfile()); last > 0)
        m_profile->setCurrentIndex(last); // loadProfile() fills the fields
}

void ConnectDialog::setUrl(const QString &url)
{
    const bool launch = url.startsWith(QLatin1String("stdio:"));
    m_launch->setText(launch ? launchUrl(url.mid(6)).path(QUrl::FullyDecoded) : QString());
    m_url->setCurrentText(launch ? QString() : url);
}

QUrl ConnectDialog::target() const
{
    const QString command = m_launch->text().trimmed();
    const QString url = m_url->currentText().trimmed();
    if (!command.isEmpty())
        return launchUrl(command);
    return url.startsWith(QLatin1String("stdio:")) ? launchUrl(url.mid(6)) : QUrl(url, QUrl::StrictMode);
}

void ConnectDialog::loadProfile(int index)
{
    m_message->clear();
    if (index <= 0) {
        m_name->clear();
        return;
    }
    const ConnectionProfile &p = m_profiles[index - 1];
    m_name->setText(p.name);
    setUrl(p.url);
    m_auth->setCurrentIndex(std::max(0, m_auth->findData(p.authMethod)));
    m_observer->setChecked(p.observerOnly);
    m_otlpEndpoint->setText(p.otlpEndpoint);
    m_otlpHeaderName->setText(p.otlpHeaderName);
    m_otlpHeaderValue->clear();
    if (!p.otlpEndpoint.isEmpty() && !p.otlpHeaderName.isEmpty()) {
        // Masked in its field; until it comes (or if the keychain cannot give it) Connect waits
        // for a value, and the message under the address says so.
        ConnectionProfiles::readKeychain(ConnectionProfiles::otlpKeychainKey(p.name), this,
                                         [this, profile = p.name](const QString &secret, const QString &error) {
                                             if (m_name->text().trimmed() != profile)
                                                 return; // another profile was chosen meanwhile
                                             if (!error.isEmpty())
                                                 m_message->setText(tr("The OS keychain is not available (%1): enter the "
                                                                       "OpenTelemetry header's value.").arg(error));
                                             else if (m_otlpHeaderValue->text().isEmpty())
                                                 m_otlpHeaderValue->setText(secret);
                                         });
    }
    m_token->clear();
    if (p.authMethod != QLatin1String("none")) {
        ConnectionProfiles::readSecret(p.name, this, [this](const QString &secret, const QString &error) {
            if (!error.isEmpty()) {
                m_message->setText(tr("The OS keychain is not available (%1): enter the token.").arg(error));
                return;
            }
            m_token->setText(secret);
            m_remember->setChecked(!secret.isEmpty());
        });
    }
    updateState();
}

void ConnectDialog::updateState()
{
    const bool needsToken = m_auth->currentData().toString() != QLatin1String("none");
    m_token->setEnabled(needsToken);
    m_remember->setEnabled(needsToken);
    m_url->setEnabled(m_launch->text().trimmed().isEmpty()); // one target: the command wins
    const QString otlpWrong = otlpProblem();
    m_otlpMessage->setText(otlpWrong);
    m_otlpMessage->setVisible(!otlpWrong.isEmpty());
    m_connectButton->setEnabled(otlpWrong.isEmpty());
}

namespace {
// An HTTP header name (RFC 9110 token): what a line of the request can carry as a name.
bool isHeaderName(const QString &name)
{
    static const QString extra = QStringLiteral("!#$%&'*+-.^_`|~");
    if (name.isEmpty())
        return false;
    for (const QChar c : name)
        if (!(c.unicode() < 128 && (c.isLetterOrNumber() || extra.contains(c))))
            return false;
    return true;
}
} // namespace

QString ConnectDialog::otlpProblem() const
{
    const QString endpoint = m_otlpEndpoint->text().trimmed();
    const QString name = m_otlpHeaderName->text().trimmed();
    const QString value = m_otlpHeaderValue->text();
    if (endpoint.isEmpty())
        return name.isEmpty() && value.isEmpty() ? QString() : tr("Enter the receiver's address, or clear the header.");
    if (!name.isEmpty() && !isHeaderName(name))
        return tr("A header name holds letters, digits and !#$%&'*+-.^_`|~ only.");
    if (name.isEmpty() && !value.isEmpty())
        return tr("Name the header that carries this value.");
    if (!name.isEmpty() && value.isEmpty())
        return tr("Enter the value of the header %1.").arg(name);
    for (const QChar c : value)
        if (c.unicode() < 0x20 || c.unicode() == 0x7f || c.unicode() > 0xff) // no line break, nothing a header cannot carry
            return tr("The header value holds a character a header cannot carry.");
    return OtlpHttpSender::checkEndpoint(QUrl(endpoint, QUrl::StrictMode), !name.isEmpty());
}

OtlpExportSettings ConnectDialog::otlp() const
{
    if (m_otlpEndpoint->text().trimmed().isEmpty())
        return {};
    return {m_otlpEndpoint->text().trimmed(), m_otlpHeaderName->text().trimmed(), m_otlpHeaderValue->text()};
}

ClientOptions ConnectDialog::options() const
{
    ClientOptions o;
    o.url = target();
    const QString method = m_auth->currentData().toString();
    if (method == QLatin1String("api-key"))
        o.auth.method = AuthConfig::Method::ApiKey;
    else if (method == QLatin1String("bearer"))
        o.auth.method = AuthConfig::Method::Bearer;
    if (o.auth.method != AuthConfig::Method::None)
        o.auth.credential = m_token->text();
    return o;
}

bool ConnectDialog::observerOnly() const
{
    return m_observer->isChecked();
}

void ConnectDialog::accept()
{
    const QUrl url = target();
    if (const QString wrong = connectionTargetError(url); !wrong.isEmpty()) {
        m_message->setText(tr("Enter where the system is: %1.").arg(wrong));
        return;
    }
    if (!url.userInfo().isEmpty() || url.hasQuery()) {
        m_message->setText(tr("Put credentials in the Token field, not in the URL: URLs are shown and remembered."));
        return;
    }
    if (const QString command = url.path(QUrl::FullyDecoded); url.scheme() == QLatin1String("stdio") && redactSecrets(command) != command) {
        m_message->setText(tr("The command holds what looks like a credential: give it to the program through its environment "
                              "or a file, not on the command line. Commands are shown and remembered."));
        return;
    }
    const QString method = m_auth->currentData().toString();
    if (method != QLatin1String("none") && m_token->text().isEmpty()) {
        m_message->setText(tr("This authentication method needs a token."));
        return;
    }
    if (const QString wrong = otlpProblem(); !wrong.isEmpty()) { // Connect is disabled then; Enter too
        m_message->setText(tr("OpenTelemetry: %1").arg(wrong));
        return;
    }
    ConnectionProfiles::addRecentServer(connectionTargetText(url));
    const QString name = m_name->text().trimmed();
    ConnectionProfiles::setLastProfile(name);
    if (!name.isEmpty()) {
        const OtlpExportSettings sendTo = otlp();
        ConnectionProfile profile;
        profile.name = name;
        profile.url = connectionTargetText(url);
        profile.authMethod = method;
        profile.observerOnly = m_observer->isChecked();
        profile.otlpEndpoint = sendTo.endpoint;
        profile.otlpHeaderName = sendTo.headerName;
        ConnectionProfiles::upsert(profile);
        QObject *context = parent() ? parent() : this; // the write outlives the dialog
        if (method != QLatin1String("none") && m_remember->isChecked())
            ConnectionProfiles::writeSecret(name, m_token->text(), context, [](const QString &) {});
        else
            ConnectionProfiles::deleteSecret(name);
        // The header's value goes with the profile (a fleet opens it without the dialog); only the
        // keychain holds it. No header (or no export): nothing of an earlier one stays behind.
        const QString otlpKey = ConnectionProfiles::otlpKeychainKey(name);
        if (!sendTo.headerName.isEmpty())
            ConnectionProfiles::writeKeychain(otlpKey, sendTo.headerValue, context, [](const QString &) {});
        else
            ConnectionProfiles::deleteKeychain(otlpKey);
    }
    QDialog::accept();
}

} // namespace mapi::ui
