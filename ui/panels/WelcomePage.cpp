#include "panels/WelcomePage.h"

#include "dialogs/ConnectionProfiles.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

namespace mapi::ui {

WelcomePage::WelcomePage(QWidget *parent)
    : QWidget(parent)
{
    setObjectName(QStringLiteral("welcomePage"));
    auto *layout = new QVBoxLayout(this);
    layout->addStretch(2);
    auto *title = new QLabel(tr("<h1>MAP Inspector</h1><p>Watch and steer a multi-agent system that speaks MAP.</p>"), this);
    title->setAlignment(Qt::AlignCenter);
    layout->addWidget(title);
    auto *buttons = new QHBoxLayout;
    buttons->addStretch();
    auto *connectButton = new QPushButton(tr("Connect to a MAP server…"), this);
    connectButton->setObjectName(QStringLiteral("welcomeConnect"));
    auto *openButton = new QPushButton(tr("Open a trace…"), this);
    openButton->setObjectName(QStringLiteral("welcomeOpenTrace"));
    connect(connectButton, &QPushButton::clicked, this, [this] { Q_EMIT connectRequested({}); });
    connect(openButton, &QPushButton::clicked, this, [this] { Q_EMIT openTraceRequested({}); });
    auto *sampleButton = new QPushButton(tr("Open the sample trace"), this);
    sampleButton->setObjectName(QStringLiteral("welcomeOpenSample"));
    sampleButton->setToolTip(tr("A minute of the demo system (40 agents), recorded and shipped with MAP Inspector"));
    connect(sampleButton, &QPushButton::clicked, this, &WelcomePage::openSampleRequested);
    buttons->addWidget(connectButton);
    buttons->addWidget(openButton);
    buttons->addWidget(sampleButton);
    buttons->addStretch();
    layout->addLayout(buttons);
    auto *demo = new QLabel(
        tr("<p>No MAP system at hand? Start the demo system that ships with the sources:</p>"
           "<pre>cd tools/demo-system &amp;&amp; npm ci --ignore-scripts\nnode demo-system.mjs --mode extended</pre>"
           "<p>and connect to the <code>ws://127.0.0.1:PORT</code> it prints.</p>"),
        this);
    demo->setAlignment(Qt::AlignCenter);
    demo->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(demo);
    m_recentBox = new QWidget(this);
    m_recentBox->setLayout(new QVBoxLayout);
    layout->addWidget(m_recentBox, 0, Qt::AlignHCenter);
    layout->addStretch(3);
    refreshRecent();
}

void WelcomePage::refreshRecent()
{
    QLayout *l = m_recentBox->layout();
    while (QLayoutItem *item = l->takeAt(0)) {
        delete item->widget();
        delete item;
    }
    const QStringList servers = ConnectionProfiles::recentServers();
    const QStringList traces = ConnectionProfiles::recentTraces();
    if (!servers.isEmpty() || !traces.isEmpty())
        l->addWidget(new QLabel(tr("<b>Recent</b>"), m_recentBox));
    for (const QString &url : servers.mid(0, 4)) {
        auto *b = new QPushButton(url, m_recentBox);
        b->setFlat(true);
        connect(b, &QPushButton::clicked, this, [this, url] { Q_EMIT connectRequested(url); });
        l->addWidget(b);
    }
    for (const QString &path : traces.mid(0, 4)) {
        auto *b = new QPushButton(path, m_recentBox);
        b->setFlat(true);
        connect(b, &QPushButton::clicked, this, [this, path] { Q_EMIT openTraceRequested(path); });
        l->addWidget(b);
    }
}

} // namespace mapi::ui
