#include "models/jsontablemodel.h"

#include <QSet>

namespace cmq::admingui {

JsonTableModel::JsonTableModel(QObject *parent) : QAbstractTableModel(parent) {}

void JsonTableModel::update(const QJsonArray &rows)
{
    QHash<QString, QJsonObject> incoming;
    QStringList order;
    incoming.reserve(rows.size());
    for (const QJsonValue &value : rows) {
        const QJsonObject object = value.toObject();
        const QString key = keyOf(object);
        if (!incoming.contains(key))
            order.append(key);
        incoming.insert(key, object);
    }

    // Remove vanished rows from the bottom up, in contiguous runs, so indices stay valid.
    for (int row = m_rows.size() - 1; row >= 0;) {
        if (incoming.contains(keyOf(m_rows[row]))) {
            --row;
            continue;
        }
        int first = row;
        while (first > 0 && !incoming.contains(keyOf(m_rows[first - 1])))
            --first;
        beginRemoveRows({}, first, row);
        m_rows.remove(first, row - first + 1);
        endRemoveRows();
        row = first - 1;
    }
    reindex();

    // Changed rows: one dataChanged per run of consecutive changed rows.
    int runStart = -1;
    const int lastColumn = columnCount() - 1;
    for (int row = 0; row <= m_rows.size(); ++row) {
        bool changed = false;
        if (row < m_rows.size()) {
            const QJsonObject &fresh = incoming[keyOf(m_rows[row])];
            if (fresh != m_rows[row]) {
                m_rows[row] = fresh;
                changed = true;
            }
        }
        if (changed && runStart < 0)
            runStart = row;
        if (!changed && runStart >= 0) {
            Q_EMIT dataChanged(index(runStart, 0), index(row - 1, lastColumn));
            runStart = -1;
        }
    }

    QList<QJsonObject> added;
    for (const QString &key : std::as_const(order)) {
        if (!m_index.contains(key))
            added.append(incoming[key]);
    }
    if (!added.isEmpty()) {
        beginInsertRows({}, m_rows.size(), m_rows.size() + added.size() - 1);
        m_rows.append(added);
        reindex();
        endInsertRows();
    }
}

void JsonTableModel::reindex()
{
    m_index.clear();
    m_index.reserve(m_rows.size());
    for (int row = 0; row < m_rows.size(); ++row)
        m_index.insert(keyOf(m_rows[row]), row);
}

int JsonTableModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int JsonTableModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(headers().size());
}

QVariant JsonTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation == Qt::Horizontal && role == Qt::DisplayRole)
        return headers().value(section);
    return QAbstractTableModel::headerData(section, orientation, role);
}

QVariant JsonTableModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || index.row() >= m_rows.size())
        return {};
    const QJsonObject &row = m_rows[index.row()];
    switch (role) {
    case Qt::DisplayRole: {
        const QVariant value = cell(row, index.column());
        if (value.typeId() == QMetaType::Double) {
            const double d = value.toDouble();
            return d == qint64(d) ? QString::number(qint64(d)) : QString::number(d, 'f', 1);
        }
        return value;
    }
    case SortRole:
        return cell(row, index.column());
    case KeyRole:
        return keyOf(row);
    case Qt::TextAlignmentRole:
        if (cell(row, index.column()).typeId() == QMetaType::Double)
            return QVariant(Qt::AlignRight | Qt::AlignVCenter);
        return {};
    default:
        return extraData(row, index.column(), role);
    }
}

QVariant JsonTableModel::extraData(const QJsonObject &, int, int) const
{
    return {};
}

} // namespace cmq::admingui
