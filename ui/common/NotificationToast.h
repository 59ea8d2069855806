// A small notification window in the corner of the screen, for desktops without a system tray
// (GNOME by default, many tiling window managers), where QSystemTrayIcon cannot show messages.
// It never takes the keyboard focus, hides itself after kShownMs, and a click on it asks the
// window to come to the front (clicked()).
// Thread: GUI thread.
#pragma once

#include <QColor>
#include <QTimer>
#include <QWidget>

class QLabel;

namespace mapi::ui {

class NotificationToast : public QWidget
{
    Q_OBJECT
public:
    static constexpr int kShownMs = 8000;

    explicit NotificationToast(QWidget *parent = nullptr);

    // Shows (or replaces) the notification in the bottom-right corner of `screenOf`'s screen.
    void showMessage(const QString &title, const QString &text, const QColor &accent, QWidget *screenOf);
    QString title() const;
    QString text() const;

Q_SIGNALS:
    void clicked();

protected:
    void mousePressEvent(QMouseEvent *event) override;
    void paintEvent(QPaintEvent *event) override;

private:
    QLabel *m_title;
    QLabel *m_text;
    QColor m_accent;
    QTimer m_hide;
};

} // namespace mapi::ui
