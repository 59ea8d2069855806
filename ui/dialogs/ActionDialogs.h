// Dialogs of the control actions: steering (inject) and the confirmation of stop, suspend and
// resume, which lists every agent affected before anything is sent.
#pragma once

#include "client/MapClient.h"

#include <QDialog>

class QButtonGroup;
class QCheckBox;
class QComboBox;
class QLabel;
class QListWidget;
class QPlainTextEdit;
class QLineEdit;

namespace mapi {
class SystemStore;
}

namespace mapi::ui {

class InjectDialog : public QDialog
{
    Q_OBJECT
public:
    InjectDialog(const SystemStore *store, const QStringList &agentIds, const QString &note, QWidget *parent = nullptr);
    Json content() const;            // text as a JSON string, or the parsed JSON
    MapClient::Delivery delivery() const;
    void accept() override;

private:
    QPlainTextEdit *m_text = nullptr;
    QCheckBox *m_asJson = nullptr;
    QComboBox *m_delivery = nullptr;
    QLabel *m_error = nullptr;
    Json m_content;
};

class ConfirmActionDialog : public QDialog
{
    Q_OBJECT
public:
    // `verb`: "Stop", "Suspend" or "Resume". The list starts with the selection; the subtree
    // box extends it to every descendant (parentId links).
    ConfirmActionDialog(const SystemStore *store, const QString &verb, const QStringList &selection,
                        const QString &note, QWidget *parent = nullptr);
    QStringList targets() const { return m_targets; }
    QString reason() const;

private:
    void refresh();

    const SystemStore *m_store;
    QStringList m_selection;
    QStringList m_targets;
    QCheckBox *m_subtree = nullptr;
    QListWidget *m_list = nullptr;
    QLineEdit *m_reason = nullptr;
    QLabel *m_summary = nullptr;
};

QString agentLabel(const SystemStore *store, const QString &id); // "name (role) · short id"

} // namespace mapi::ui
