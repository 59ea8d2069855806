#include "models/AgentWorkModels.h"

#include "common/ColumnTitles.h"
#include "common/NaturalSort.h"
#include "common/TimeText.h"

#include <QLocale>

#include <algorithm>

namespace mapi::ui {

namespace {

// An element of an array artifact that reads as text: a string, or an object with a string
// "text" (and maybe a "role": a transcript's turn).
bool isReadableElement(const Json &element)
{
    if (element.is_string())
        return true;
    const Json *text = jsonChild(element, "text");
    return text && text->is_string();
}

bool isReadableArtifact(const Json &value)
{
    if (value.is_string())
        return true;
    return value.is_array() && !value.empty() && std::all_of(value.begin(), value.end(), isReadableElement);
}

} // namespace

QString boundedUtf8Text(QByteArrayView utf8, qsizetype maxBytes, bool *cut)
{
    if (cut)
        *cut = false;
    qsizetype length = utf8.size();
    if (length > std::max<qsizetype>(0, maxBytes)) {
        length = std::max<qsizetype>(0, maxBytes);
        while (length > 0 && (uchar(utf8[length]) & 0xC0) == 0x80) // not inside a character
            --length;
        if (cut)
            *cut = true;
    }
    return QString::fromUtf8(utf8.first(length));
}

QString boundedText(const Json &string, qsizetype maxBytes, bool *cut)
{
    if (cut)
        *cut = false;
    if (!string.is_string())
        return {};
    const std::string &bytes = string.get_ref<const std::string &>();
    return boundedUtf8Text(QByteArrayView(bytes.data(), qsizetype(bytes.size())), maxBytes, cut);
}

ReadableText readableArtifacts(const Json &artifacts, qsizetype maxChars)
{
    ReadableText out;
    if (!artifacts.is_object())
        return out;
    // Appends while there is room; false once the bound is reached (the rest is not read).
    const auto append = [&](const QString &piece) {
        if (out.text.size() + piece.size() > maxChars) {
            out.text += QStringView(piece).left(std::max<qsizetype>(0, maxChars - out.text.size()));
            out.cut = true;
            return false;
        }
        out.text += piece;
        return true;
    };
    for (auto it = artifacts.begin(); it != artifacts.end(); ++it) {
        const Json &value = it.value();
        if (!isReadableArtifact(value))
            continue;
        ++out.artifacts;
        const QString heading = QStringLiteral("── %1 ──\n").arg(QString::fromStdString(it.key()));
        if (!append(out.text.isEmpty() ? heading : QString(QLatin1Char('\n') + heading)))
            return out;
        // Strings are converted only as far as they can be shown (UTF-8 bytes ≥ characters).
        if (value.is_string()) {
            bool longer = false;
            const QString text = boundedText(value, maxChars - out.text.size() + 1, &longer);
            if (!append(text + QLatin1Char('\n')) || longer) {
                out.cut = true;
                return out;
            }
            continue;
        }
        for (const Json &element : value) {
            const qsizetype room = maxChars - out.text.size() + 1;
            bool longer = false;
            QString line;
            if (element.is_string()) {
                line = boundedText(element, room, &longer);
            } else {
                const QString role = jsonString(element, "role");
                const QString text = boundedText(*jsonChild(element, "text"), room, &longer);
                line = role.isEmpty() ? text : QString(role + QStringLiteral(": ") + text);
            }
            if (!append(line + QLatin1Char('\n')) || longer) {
                out.cut = true;
                return out;
            }
        }
    }
    return out;
}

// ---- CheckpointModel ---------------------------------------------------------------------

CheckpointModel::CheckpointModel(const SystemStore *store, QObject *parent)
    : RowVectorModel<Checkpoint>(ColumnCount, parent)
    , m_store(store)
{
    connect(store, &SystemStore::changed, this, [this](const ChangeSet &changes) {
        if (changes.checkpointsChanged && !m_agentId.isEmpty())
            refresh();
    });
    connect(store, &SystemStore::aboutToReset, this, [this] {
        beginResetModel();
        m_rows.clear(); // the agent stays: its checkpoints are shown again if they come back
    });
    connect(store, &SystemStore::wasReset, this, [this] { endResetModel(); });
}

std::vector<Checkpoint> CheckpointModel::checkpointsOfAgent() const
{
    std::vector<Checkpoint> rows;
    if (m_agentId.isEmpty())
        return rows;
    const std::vector<const Checkpoint *> found = m_store->checkpoints().of(m_agentId);
    rows.reserve(found.size());
    for (const Checkpoint *checkpoint : found)
        rows.push_back(*checkpoint);
    return rows;
}

void CheckpointModel::setAgentId(const QString &agentId)
{
    if (agentId == m_agentId)
        return;
    beginResetModel();
    m_agentId = agentId;
    m_rows = checkpointsOfAgent();
    endResetModel();
}

void CheckpointModel::refresh()
{
    std::vector<Checkpoint> next = checkpointsOfAgent();
    const size_t old = m_rows.size();
    bool appended = next.size() >= old;
    for (size_t i = 0; appended && i < old; ++i)
        appended = m_rows[i].id == next[i].id;
    if (!appended) { // one inserted by time before others, or the oldest dropped by the bound
        beginResetModel();
        m_rows = std::move(next);
        endResetModel();
        return;
    }
    if (next.size() > old) {
        beginInsertRows({}, int(old), int(next.size()) - 1);
        m_rows = std::move(next);
        endInsertRows();
    } else {
        m_rows = std::move(next);
    }
    if (old > 0) // an event may have come for one known from a list (its row)
        Q_EMIT dataChanged(index(0, 0), index(int(old) - 1, ColumnCount - 1));
}

int CheckpointModel::rowOfCheckpoint(const QString &checkpointId) const
{
    const auto it = std::find_if(m_rows.begin(), m_rows.end(), [&](const Checkpoint &c) { return c.id == checkpointId; });
    return it == m_rows.end() ? -1 : int(it - m_rows.begin());
}

QVariant CheckpointModel::rowData(const Checkpoint &c, int column, int role) const
{
    switch (role) {
    case CheckpointIdRole: return c.id;
    case EventRowRole: return c.eventRow;
    case Qt::DisplayRole:
        switch (column) {
        case TimeColumn: return timeOfDay(c.timeMs, TimePrecision::Milliseconds);
        case LabelColumn: return c.label.isEmpty() ? c.id : c.label;
        case WorkSessionColumn: return c.workSessionId;
        case MetadataColumn:
            return c.metadata.size() > kMetadataCellChars ? QString(c.metadata.left(kMetadataCellChars) + QChar(u'\u2026'))
                                                          : c.metadata;
        }
        return {};
    case Qt::ToolTipRole:
        switch (column) {
        case TimeColumn: return dateAndTime(c.timeMs);
        case LabelColumn: return tr("checkpoint %1").arg(c.id);
        case WorkSessionColumn:
            return c.workSessionId.isEmpty() ? QVariant() : QVariant(tr("The agent's own work session (not a MAP session)"));
        case MetadataColumn: return c.metadata;
        }
        return {};
    default:
        return {};
    }
}

QVariant CheckpointModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    return columnTitle(section, orientation, role, {tr("Time"), tr("Label"), tr("Work session"), tr("Metadata")});
}

// ---- WorkspaceFileModel ------------------------------------------------------------------

WorkspaceFileModel::WorkspaceFileModel(QObject *parent)
    : RowVectorModel<WorkspaceFile>(ColumnCount, parent)
{
}

int WorkspaceFileModel::setFiles(const Json &result)
{
    std::vector<WorkspaceFile> files;
    int leftOut = 0;
    if (const Json *list = jsonChild(result, "files"); list && list->is_array()) {
        for (const Json &entry : *list) {
            if (!entry.is_object())
                continue;
            if (int(files.size()) >= kMaxFiles) {
                ++leftOut;
                continue;
            }
            WorkspaceFile &file = files.emplace_back();
            file.path = jsonString(entry, "path");
            const Json *directory = jsonChild(entry, "isDirectory");
            file.isDirectory = directory && directory->is_boolean() && directory->get<bool>();
            const Json *size = jsonChild(entry, "size");
            file.size = size && size->is_number() ? saturatedInt(size->get<double>()) : -1;
            file.mime = jsonString(entry, "mime");
        }
    }
    std::sort(files.begin(), files.end(), [](const WorkspaceFile &a, const WorkspaceFile &b) {
        if (a.isDirectory != b.isDirectory)
            return a.isDirectory;
        return naturalLess(a.path, b.path);
    });
    beginResetModel();
    m_rows = std::move(files);
    endResetModel();
    return leftOut;
}

void WorkspaceFileModel::clear()
{
    beginResetModel();
    m_rows.clear();
    endResetModel();
}

const WorkspaceFile *WorkspaceFileModel::file(int row) const
{
    return row >= 0 && size_t(row) < m_rows.size() ? &m_rows[size_t(row)] : nullptr;
}

QVariant WorkspaceFileModel::rowData(const WorkspaceFile &f, int column, int role) const
{
    switch (role) {
    case PathRole: return f.path;
    case IsDirectoryRole: return f.isDirectory;
    case SizeRole: return f.size;
    case Qt::DisplayRole:
        switch (column) {
        case PathColumn: return f.isDirectory ? QString(f.path + QLatin1Char('/')) : f.path;
        case KindColumn: return f.isDirectory ? tr("directory") : (f.mime.isEmpty() ? tr("file") : f.mime);
        case SizeColumn: return f.size >= 0 ? QLocale().formattedDataSize(f.size) : QString();
        }
        return {};
    case Qt::ToolTipRole:
        if (column == PathColumn)
            return f.isDirectory ? tr("%1\ndouble-click to list it").arg(f.path) : tr("%1\ndouble-click to read it").arg(f.path);
        if (column == SizeColumn && f.size >= 0)
            return tr("%1 bytes").arg(f.size);
        return {};
    case Qt::TextAlignmentRole: // sizes line up on the right, like numbers
        return column == SizeColumn ? QVariant(int(Qt::AlignRight | Qt::AlignVCenter)) : QVariant();
    default:
        return {};
    }
}

QVariant WorkspaceFileModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    return columnTitle(section, orientation, role, {tr("Path"), tr("Kind"), tr("Size")});
}

} // namespace mapi::ui
