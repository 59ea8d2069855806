#include "common/NotificationToast.h"

#include <QGuiApplication>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QScreen>
#include <QVBoxLayout>

namespace mapi::ui {

NotificationToast::NotificationToast(QWidget *parent)
    : QWidget(parent, Qt::Tool | Qt::FramelessWindowHint | Qt::WindowStaysOnTopHint | Qt::WindowDoesNotAcceptFocus)
{
    setObjectName(QStringLiteral("notificationToast"));
    setAttribute(Qt::WA_ShowWithoutActivating);
    setCursor(Qt::PointingHandCursor);
    m_title = new QLabel(this);
    m_title->setObjectName(QStringLiteral("toastTitle"));
    QFont bold = m_title->font();
    bold.setBold(true);
    m_title->setFont(bold);
    m_text = new QLabel(this);
    m_text->setObjectName(QStringLiteral("toastText"));
    m_text->setWordWrap(true);
    auto *hint = new QLabel(tr("Click to open MAP Inspector's alerts"), this);
    hint->setForegroundRole(QPalette::PlaceholderText);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(18, 10, 12, 10);
    layout->addWidget(m_title);
    layout->addWidget(m_text);
    layout->addWidget(hint);
    const int em = fontMetrics().horizontalAdvance(QLatin1Char('m'));
    setFixedWidth(30 * em);
    m_hide.setSingleShot(true);
    connect(&m_hide, &QTimer::timeout, this, &QWidget::hide);
}

void NotificationToast::showMessage(const QString &title, const QString &text, const QColor &accent, QWidget *screenOf)
{
    m_title->setText(title);
    m_text->setText(text);
    m_accent = accent;
    adjustSize();
    QScreen *screen = screenOf ? screenOf->screen() : QGuiApplication::primaryScreen();
    if (screen) {
        const QRect area = screen->availableGeometry();
        const int margin = 16;
        move(area.right() - width() - margin, area.bottom() - height() - margin);
    }
    show();
    raise();
    update();
    m_hide.start(kShownMs);
}

QString NotificationToast::title() const
{
    return m_title->text();
}

QString NotificationToast::text() const
{
    return m_text->text();
}

void NotificationToast::mousePressEvent(QMouseEvent *event)
{
    if (event->button() == Qt::LeftButton) {
        hide();
        Q_EMIT clicked();
    }
}

void NotificationToast::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    p.fillRect(rect(), palette().color(QPalette::ToolTipBase));
    p.fillRect(QRect(0, 0, 6, height()), m_accent);
    p.setPen(palette().color(QPalette::Mid));
    p.drawRect(rect().adjusted(0, 0, -1, -1));
}

} // namespace mapi::ui
