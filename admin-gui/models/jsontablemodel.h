#pragma once
// A table of JSON objects keyed by an identity (queue name, connection id, bucket scope+key),
// updated from successive snapshots in place: unchanged rows stay untouched, changed rows get
// dataChanged, only vanished/new rows are removed/inserted — so selection, sort and scroll
// survive the once-a-second watch stream.

#include <QAbstractTableModel>
#include <QHash>
#include <QJsonArray>
#include <QJsonObject>
#include <QList>

namespace cmq::admingui {

class JsonTableModel : public QAbstractTableModel
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(JsonTableModel)

public:
    // The role views sort by: numbers as numbers, not as display text.
    static constexpr int SortRole = Qt::UserRole + 1;
    // The key of the row (a QString).
    static constexpr int KeyRole = Qt::UserRole + 2;
    // A 0..1 fraction for bar columns (rate limits), invalid elsewhere.
    static constexpr int FractionRole = Qt::UserRole + 3;

    explicit JsonTableModel(QObject *parent = nullptr);

    void update(const QJsonArray &rows);
    QJsonObject rowObject(int row) const { return m_rows.value(row); }
    int rowOf(const QString &key) const { return m_index.value(key, -1); }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;
    QVariant data(const QModelIndex &index, int role) const override;

protected:
    virtual QString keyOf(const QJsonObject &row) const = 0;
    virtual QStringList headers() const = 0;
    // Display value of a cell; the base formats numbers and sorts by the raw value.
    virtual QVariant cell(const QJsonObject &row, int column) const = 0;
    virtual QVariant extraData(const QJsonObject &row, int column, int role) const;

private:
    void reindex();

    QList<QJsonObject> m_rows;
    QHash<QString, int> m_index;
};

} // namespace cmq::admingui
