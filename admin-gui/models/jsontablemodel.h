#pragma once
// A table of JSON objects keyed by an identity (queue name, connection id, bucket scope+key),
// updated from successive snapshots in place: unchanged rows stay untouched, changed rows get
// dataChanged, only vanished/new rows are removed/inserted — so selection, sort and scroll
// survive the once-a-second watch stream. When most rows changed at once (a busy broker with
// thousands of queues), one layout change replaces the dataChanged runs: a sorting proxy then
// re-sorts once instead of moving every changed row on its own, which is what keeps a
// 5,000-row update fast. Rows keep their positions either way.

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

    // From this many changed rows (and at least a quarter of the table) an update is announced
    // as a layout change instead of dataChanged runs.
    static constexpr int LayoutChangeRows = 256;

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
    // The text shown for a cell's value; the base writes numbers without needless decimals.
    // From the stored value alone, so painting stays as cheap as before.
    virtual QVariant displayText(const QVariant &value, int column) const;
    // Whether a row must be redrawn; subclasses with derived columns (rates) add their own test.
    virtual bool rowDiffers(const QString &key, const QJsonObject &before,
                            const QJsonObject &after) const;

private:
    void applyChanges(const QList<int> &changed, const QList<QJsonObject> &objects,
                      const QList<int> &source);
    void reindex();
    QList<QVariant> cellsOf(const QJsonObject &row) const;
    // headers() once: views ask for columnCount() on nearly every call.
    const QStringList &columns() const;

    QList<QJsonObject> m_rows;
    QList<QString> m_keys; // keyOf(m_rows[i]), computed once per row
    // cell() of every column, computed when the row changes: sorting and painting read these.
    QList<QList<QVariant>> m_cells;
    QHash<QString, int> m_index;
    mutable QStringList m_columns;
};

} // namespace cmq::admingui
