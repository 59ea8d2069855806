// Inspector panel: the item focused in SelectionHub (agent, scope, task, action, message, event or
// protocol problem) as a JSON tree and as raw text, under a one-line header saying what it is.
//
// Agents, scopes, tasks and actions are built from the store's records; messages and events show
// the exact frame text that carried them (SystemStore::eventFrame), problems the offending frame
// (bytes that are not UTF-8 escaped as \xNN). Everything shown or copied has passed through
// redactSecrets().
//
// Thread: GUI thread. Follows SystemStore::changed(): the item is rebuilt only when its own row
// changed (agents, scopes, tasks, actions), when a new event concerns the shown message, or when
// a missing item appears; while the panel is hidden that refresh waits until it is shown. The tree
// model merges each rebuild, so expansion, selection and scroll position survive it.
//
// The Chain tab: the causal chain (model/CausalChains.h) of the focused message (or of the
// message an event carried, or of a task's first message): what caused it, root first, then
// what it led to as a tree. Activating an entry focuses that message; goToCause(),
// goToEffect() and goToSibling() walk the chain from the keyboard (the window's Alt+arrows).
// The chain is published to SelectionHub::setChain for the timeline and topology to light up.
// The index is built in slices of kChainSliceRows messages on a timer, so a large trace does not
// stall the window on the first click.
#pragma once

#include "models/JsonTreeModel.h"
#include "session/SelectionHub.h"

#include <QWidget>

#include <functional>
#include <memory>

class QCheckBox;
class QLabel;
class QPlainTextEdit;
class QPushButton;
class QStackedWidget;
class QTabWidget;
class QTimer;
class QTreeView;
class QTreeWidget;
class QTreeWidgetItem;
class QToolButton;

namespace mapi {
class CausalChains;
class InspectorSession;
class SystemStore;
struct ChangeSet;
} // namespace mapi

namespace mapi::ui {

// Message, event and problem keys are row numbers; anything else is "not found". `key` as a row
// in [first, end) (-1: none, or trimmed by a live session's history bound).
int inspectorRowKey(const QString &key, size_t end, size_t first = 0);

class InspectorPanel : public QWidget
{
    Q_OBJECT
public:
    InspectorPanel(InspectorSession *session, SelectionHub *selection, QWidget *parent = nullptr);
    ~InspectorPanel() override;

    static constexpr size_t kChainSliceRows = 20000;
    static constexpr int kMaxChainShown = 300; // entries in the Chain tab (causes + effects)

    // Walks the focused message's chain: to its cause, its first effect, its previous (-1) or
    // next (+1) sibling (another effect of the same cause). False when there is none.
    bool goToCause();
    bool goToEffect();
    bool goToSibling(int delta);
    QTreeWidget *chainTree() const { return m_chainTree; } // tests

    // The same agent in the window's other systems (ui/systems/FederatedTwins.h): their labels,
    // for the agent shown. Set by the window; the "Show in …" button offers them, and choosing
    // one emits twinRequested(agent id here, that system's label). Looked up when another item
    // is shown and at refreshTwins() (the window's systems or their agents changed).
    using TwinLookup = std::function<QStringList(const QString &agentId)>;
    void setTwinLookup(TwinLookup lookup);
    void refreshTwins();
    QToolButton *twinButton() const { return m_twin; } // tests
    QString shownKey() const { return m_shownKey; }    // tests: the item the tree holds

Q_SIGNALS:
    void twinRequested(const QString &agentId, const QString &systemLabel);

public:

    // The raw tab shows at most this many characters: a compact frame is one line, and laying out
    // (wrapping) a line costs ≈40 ms per 64 Ki characters here, so more would stall the GUI thread.
    // "Copy raw" still copies all of it. 64 Ki also shows every kept problem frame whole.
    static constexpr int kMaxShownRawChars = 64 * 1024;

protected:
    void showEvent(QShowEvent *event) override;
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    void showItem(SelectionHub::Kind kind, const QString &key);
    void onStoreChanged(const ChangeSet &changes);
    bool concernsShownItem(const ChangeSet &changes) const;
    void refresh();
    void showRawText();
    QString jsonText() const; // the tree's (redacted) JSON, pretty-printed: "Copy JSON"
    void expandSmallTopLevelNodes();
    void copySelectedValue();
    void copySelectedPath();
    void showTreeMenu(const QPoint &pos);
    int chainMessageRow() const; // the message whose chain the focused item has (-1: none)
    void refreshChain();
    // A row of the Chain tab (the focused one in bold), under `parent` or at the top.
    QTreeWidgetItem *addChainRow(const QStringList &columns, QTreeWidgetItem *parent, bool focused);
    QTreeWidgetItem *chainItem(int row, QTreeWidgetItem *parent, bool focused);
    // An event that carried no message: its MAP causedBy links to other events (EventLog).
    bool showEventChain(int event);
    QTreeWidgetItem *eventChainItem(int event, QTreeWidgetItem *parent, bool focused);

    SelectionHub *m_selection;
    const SystemStore *m_store;

    QStackedWidget *m_pages;
    QLabel *m_hint;
    QWidget *m_content;
    QLabel *m_header;
    QPushButton *m_copyJson;
    QToolButton *m_twin;
    TwinLookup m_twinLookup;
    QStringList m_twinSystems; // what the button offers, for m_twinAgent
    QString m_twinAgent;
    QPushButton *m_copyRaw;
    QTabWidget *m_tabs;
    QTreeView *m_tree;
    JsonTreeModel *m_model;
    QCheckBox *m_pretty;
    QLabel *m_rawNote;
    QPlainTextEdit *m_raw;

    SelectionHub::Kind m_kind = SelectionHub::Kind::None; // what the hub focuses
    QString m_key;
    SelectionHub::Kind m_shownKind = SelectionHub::Kind::None; // what the tree holds
    QString m_shownKey;
    bool m_found = false;
    bool m_stale = false;       // a store change concerned the item while the panel was hidden

    bool m_hasFrame = false;
    QByteArray m_frame;         // the exact frame (redacted)
    QString m_frameNote;
    QString m_rawText;          // the raw tab's whole text: "Copy raw"
    QString m_rawShown;         // what the raw view holds (m_rawText, capped)

    std::unique_ptr<CausalChains> m_chains;
    QTreeWidget *m_chainTree = nullptr;
    QLabel *m_chainNote = nullptr;
    QTimer *m_chainTimer = nullptr; // indexes the next slice while messages are pending
    bool m_chainRefreshQueued = false;
    mutable QString m_taskChainKey; // the task whose first message m_taskChainRow is
    mutable int m_taskChainRow = -1;
};

} // namespace mapi::ui
