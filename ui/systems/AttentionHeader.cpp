#include "systems/AttentionHeader.h"

#include "SystemView.h"
#include "model/SystemStore.h"
#include "models/AgentFilter.h"
#include "models/AlertModel.h"
#include "models/HealthModel.h"
#include "panels/AlertsPanel.h"
#include "session/InspectorSession.h"
#include "style/Colors.h"

#include <QDateTime>
#include <QHBoxLayout>
#include <QHash>
#include <QLabel>
#include <QLocale>
#include <QRegularExpression>
#include <QTextDocumentFragment>

#include <algorithm>
#include <array>
#include <utility>
#include <vector>

namespace mapi::ui {

namespace {

constexpr int kMostStates = 6;        // the commonest states; the rest are in the Agents panel
constexpr int kMostOtherSystems = 8;  // lines for systems behind the front one

QString link(const QString &href, const QString &text, const QColor &colour = {})
{
    const QString style = colour.isValid() ? QStringLiteral("color:%1;").arg(colour.name()) : QString();
    return QStringLiteral("<a href=\"%1\" style=\"%2text-decoration:none\">%3</a>")
        .arg(href.toHtmlEscaped(), style, text.toHtmlEscaped());
}

} // namespace

AttentionHeader::AttentionHeader(std::function<QList<SystemView *>()> systems, std::function<SystemView *()> front, QWidget *parent)
    : QWidget(parent)
    , m_systems(std::move(systems))
    , m_front(std::move(front))
    , m_text(new QLabel(this))
{
    setObjectName(QStringLiteral("attentionHeader"));
    m_text->setObjectName(QStringLiteral("attentionText"));
    m_text->setTextFormat(Qt::RichText);
    m_text->setTextInteractionFlags(Qt::LinksAccessibleByMouse | Qt::LinksAccessibleByKeyboard);
    m_text->setOpenExternalLinks(false);
    // One line per system, never a minimum of the window's own: on a laptop's smallest window
    // the topology keeps its room and the line is cut at the right (its tooltip says it whole).
    m_text->setWordWrap(false);
    m_text->setMinimumSize(1, 1);
    connect(m_text, &QLabel::linkActivated, this, &AttentionHeader::activate);
    auto *layout = new QHBoxLayout(this);
    layout->setContentsMargins(6, 2, 6, 2);
    layout->addWidget(m_text, 1);
    m_tick.setInterval(1000); // health changes with time alone (late, unresponsive): a second is its unit
    connect(&m_tick, &QTimer::timeout, this, &AttentionHeader::refresh);
    m_tick.start();
    m_soon.setSingleShot(true);
    m_soon.setInterval(200);
    connect(&m_soon, &QTimer::timeout, this, &AttentionHeader::refresh);
    refresh();
}

void AttentionHeader::refreshSoon()
{
    if (!m_soon.isActive())
        m_soon.start();
}

QString AttentionHeader::lineOf(SystemView *system, bool named) const
{
    const SystemStore &store = *system->session()->store();
    std::array<int, kHealthCount> healths{};
    QHash<QString, int> states;
    int agents = 0;
    for (const Agent &agent : store.agents()) {
        if (agent.unregistered)
            continue;
        ++agents;
        ++healths[size_t(agent.health)];
        // Counted as the filter compares: case aside, "custom:failed" with "failed".
        QString state = agent.state;
        if (state.startsWith(QLatin1String("custom:"), Qt::CaseInsensitive))
            state = state.mid(7);
        ++states[state.toLower()];
    }
    const QLocale locale;
    const QString number = QString::number(system->number());
    QStringList parts;
    if (named)
        parts << QStringLiteral("<b>%1</b>").arg(system->label().toHtmlEscaped());
    parts << tr("%1 agents").arg(locale.toString(agents));

    QStringList byHealth;
    for (const Health h : healthsWorstFirst())
        if (healths[size_t(h)] > 0)
            byHealth << link(QStringLiteral("filter:%1:health:%2").arg(number, healthName(h)),
                             QStringLiteral("%1 %2").arg(locale.toString(healths[size_t(h)]), healthName(h)), healthColor(h));
    if (!byHealth.isEmpty())
        parts << byHealth.join(QStringLiteral(" · "));

    std::vector<std::pair<QString, int>> byCount;
    for (auto it = states.cbegin(); it != states.cend(); ++it)
        byCount.emplace_back(it.key(), it.value());
    std::sort(byCount.begin(), byCount.end(),
              [](const auto &a, const auto &b) { return a.second != b.second ? a.second > b.second : a.first < b.first; });
    QStringList byState;
    for (size_t i = 0; i < byCount.size() && i < size_t(kMostStates); ++i) {
        const QString state = byCount[i].first.isEmpty() ? tr("(no state)") : byCount[i].first;
        const QString query = byCount[i].first.isEmpty() ? QStringLiteral("-state:~.") : QStringLiteral("state:") + AgentFilter::quoted(byCount[i].first);
        byState << link(QStringLiteral("filter:%1:%2").arg(number, query), QStringLiteral("%1 %2").arg(locale.toString(byCount[i].second), state));
    }
    if (byCount.size() > size_t(kMostStates))
        byState << (byCount.size() == size_t(kMostStates) + 1 ? tr("1 other state")
                                                               : tr("%1 other states").arg(int(byCount.size()) - kMostStates));
    if (!byState.isEmpty())
        parts << tr("states: %1").arg(byState.join(QStringLiteral(" · ")));

    if (const AlertsPanel *panel = system->alerts()) {
        const AlertModel::Counts c = panel->model()->counts(QDateTime::currentMSecsSinceEpoch());
        QString alerts = c.open == 0 ? tr("no open alert") : c.open == 1 ? tr("1 open alert") : tr("%1 open alerts").arg(locale.toString(c.open));
        if (c.critical > 0)
            alerts += tr(", %1 critical").arg(locale.toString(c.critical));
        if (c.groups > 0)
            alerts += c.groups == 1 ? tr(", 1 group") : tr(", %1 groups").arg(c.groups);
        parts << link(QStringLiteral("alerts:%1").arg(number), alerts,
                      c.critical > 0 ? alertSeverityColor(2) : c.open - c.acknowledged - c.snoozed > 0 ? alertSeverityColor(1) : QColor());
    }
    return parts.join(QStringLiteral(" — "));
}

void AttentionHeader::refresh()
{
    SystemView *front = m_front ? m_front() : nullptr;
    const QList<SystemView *> all = m_systems ? m_systems() : QList<SystemView *>();
    QStringList lines;
    const bool several = all.size() > 1;
    if (front && front->session()->source() != InspectorSession::Source::None)
        lines << lineOf(front, several);
    int others = 0, notShown = 0;
    for (SystemView *system : all) {
        if (system == front || system->session()->source() == InspectorSession::Source::None)
            continue;
        if (others++ < kMostOtherSystems)
            lines << lineOf(system, true);
        else
            ++notShown;
    }
    if (notShown > 0)
        lines << (notShown == 1 ? tr("and 1 more system: see the Systems overview")
                                : tr("and %1 more systems: see the Systems overview").arg(notShown));
    const QString html = lines.join(QStringLiteral("<br>"));
    setVisible(!lines.isEmpty());
    if (html != m_text->text()) {
        m_text->setText(html);
        m_text->setToolTip(plainText());
    }
}

QStringList AttentionHeader::links() const
{
    QStringList out;
    static const QRegularExpression href(QStringLiteral("href=\"([^\"]*)\""));
    for (auto it = href.globalMatch(m_text->text()); it.hasNext();)
        out << QTextDocumentFragment::fromHtml(it.next().captured(1)).toPlainText();
    return out;
}

QString AttentionHeader::plainText() const
{
    return QTextDocumentFragment::fromHtml(m_text->text()).toPlainText();
}

void AttentionHeader::activate(const QString &link)
{
    const QString kind = link.section(u':', 0, 0);
    const int number = link.section(u':', 1, 1).toInt();
    SystemView *system = nullptr;
    for (SystemView *s : m_systems())
        if (s->number() == number)
            system = s;
    if (!system)
        return; // closed since the line was drawn
    if (kind == QLatin1String("filter"))
        Q_EMIT agentsFilterRequested(system, link.section(u':', 2));
    else if (kind == QLatin1String("alerts"))
        Q_EMIT alertsRequested(system);
}

} // namespace mapi::ui
