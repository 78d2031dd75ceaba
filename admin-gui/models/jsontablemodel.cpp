#include "models/jsontablemodel.h"

#include <utility>

namespace cmq::admingui {

JsonTableModel::JsonTableModel(QObject *parent) : QAbstractTableModel(parent)
{
}

void JsonTableModel::update(const QJsonArray &rows)
{
    // The incoming rows by key; a key seen twice keeps its last object, at its first position.
    QList<QJsonObject> objects;
    QList<QString> keys;
    QHash<QString, int> incoming;
    objects.reserve(rows.size());
    keys.reserve(rows.size());
    incoming.reserve(rows.size());
    for (const QJsonValue &value : rows) {
        QJsonObject object = value.toObject();
        QString key = keyOf(object);
        if (const auto seen = incoming.constFind(key); seen != incoming.constEnd()) {
            objects[*seen] = std::move(object);
            continue;
        }
        incoming.insert(key, int(objects.size()));
        objects.append(std::move(object));
        keys.append(std::move(key));
    }

    // Remove vanished rows from the bottom up, in contiguous runs, so indices stay valid.
    bool removed = false;
    for (int row = int(m_rows.size()) - 1; row >= 0;) {
        if (incoming.contains(m_keys[row])) {
            --row;
            continue;
        }
        int first = row;
        while (first > 0 && !incoming.contains(m_keys[first - 1]))
            --first;
        beginRemoveRows({}, first, row);
        m_rows.remove(first, row - first + 1);
        m_keys.remove(first, row - first + 1);
        m_cells.remove(first, row - first + 1);
        endRemoveRows();
        removed = true;
        row = first - 1;
    }
    if (removed)
        reindex();

    QList<int> changed; // model rows, ascending
    QList<int> source;  // their index in `objects`
    for (int row = 0; row < m_rows.size(); ++row) {
        const int from = incoming.value(m_keys[row]);
        if (rowDiffers(m_keys[row], m_rows[row], objects[from])) {
            changed.append(row);
            source.append(from);
        }
    }
    applyChanges(changed, objects, source);

    QList<int> added;
    for (int i = 0; i < keys.size(); ++i) {
        if (!m_index.contains(keys[i]))
            added.append(i);
    }
    if (!added.isEmpty()) {
        beginInsertRows({}, int(m_rows.size()), int(m_rows.size() + added.size() - 1));
        for (const int i : std::as_const(added)) {
            m_index.insert(keys[i], int(m_rows.size()));
            m_rows.append(objects[i]);
            m_keys.append(keys[i]);
            m_cells.append(cellsOf(objects[i]));
        }
        endInsertRows();
    }
}

void JsonTableModel::applyChanges(const QList<int> &changed, const QList<QJsonObject> &objects,
                                  const QList<int> &source)
{
    if (changed.size() >= LayoutChangeRows && changed.size() * 4 >= m_rows.size()) {
        Q_EMIT layoutAboutToBeChanged();
        for (int i = 0; i < changed.size(); ++i) {
            m_rows[changed[i]] = objects[source[i]];
            m_cells[changed[i]] = cellsOf(objects[source[i]]);
        }
        Q_EMIT layoutChanged();
        return;
    }
    // One dataChanged per run of consecutive changed rows.
    const int lastColumn = columnCount() - 1;
    for (int i = 0; i < changed.size();) {
        int j = i;
        while (j + 1 < changed.size() && changed[j + 1] == changed[j] + 1)
            ++j;
        for (int k = i; k <= j; ++k) {
            m_rows[changed[k]] = objects[source[k]];
            m_cells[changed[k]] = cellsOf(objects[source[k]]);
        }
        Q_EMIT dataChanged(index(changed[i], 0), index(changed[j], lastColumn));
        i = j + 1;
    }
}

bool JsonTableModel::rowDiffers(const QString &, const QJsonObject &before,
                                const QJsonObject &after) const
{
    return before != after;
}

QList<QVariant> JsonTableModel::cellsOf(const QJsonObject &row) const
{
    QList<QVariant> cells;
    const int count = columnCount();
    cells.reserve(count);
    for (int column = 0; column < count; ++column)
        cells.append(cell(row, column));
    return cells;
}

void JsonTableModel::reindex()
{
    m_index.clear();
    m_index.reserve(m_rows.size());
    for (int row = 0; row < m_keys.size(); ++row)
        m_index.insert(m_keys[row], row);
}

int JsonTableModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

const QStringList &JsonTableModel::columns() const
{
    if (m_columns.isEmpty())
        m_columns = headers();
    return m_columns;
}

int JsonTableModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(columns().size());
}

QVariant JsonTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation == Qt::Horizontal && role == Qt::DisplayRole)
        return columns().value(section);
    return QAbstractTableModel::headerData(section, orientation, role);
}

QVariant JsonTableModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || index.row() >= m_rows.size())
        return {};
    const QVariant &value = m_cells[index.row()].at(index.column());
    switch (role) {
    case Qt::DisplayRole:
        return displayText(value, index.column());
    case SortRole:
        return value;
    case KeyRole:
        return m_keys[index.row()];
    case Qt::TextAlignmentRole:
        if (value.typeId() == QMetaType::Double)
            return QVariant(Qt::AlignRight | Qt::AlignVCenter);
        return {};
    case Qt::ToolTipRole:
        // The whole text, for cells a narrow column elides (serials, subjects).
        if (const QVariant tip = extraData(m_rows[index.row()], index.column(), role);
            tip.isValid())
            return tip;
        return value.typeId() == QMetaType::QString ? value : QVariant();
    default:
        return extraData(m_rows[index.row()], index.column(), role);
    }
}

QVariant JsonTableModel::extraData(const QJsonObject &, int, int) const
{
    return {};
}

QVariant JsonTableModel::displayText(const QVariant &value, int) const
{
    if (value.typeId() == QMetaType::Double) {
        const double d = value.toDouble();
        return d == qint64(d) ? QString::number(qint64(d)) : QString::number(d, 'f', 1);
    }
    return value;
}

} // namespace cmq::admingui
