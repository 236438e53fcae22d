/// Guesses a model from a store's SQLite schema alone, when no model can be found.
///
/// Entities and their hierarchy come from `Z_PRIMARYKEY`; attributes from the columns of each root table (a column
/// `ZNUMBERPLATE` becomes `numberplate`: the original capitalisation is lost); types from the declared column types;
/// an INTEGER column that has a Core Data foreign-key index (`<TABLE>_<COLUMN>_INDEX`) and names an entity becomes a
/// to-one relationship. Everything is attached to the root entity, since columns do not say which sub-entity owns them.
enum SchemaInference {
    static func infer(metadata: StoreMetadata, schema: SQLiteSchema) -> ManagedObjectModel {
        let rows = metadata.entityRows.filter { !$0.isAncillary }
        var entities: [EntityDescription] = []
        for row in rows {
            var entity = EntityDescription(name: row.name, parentName: rows.first { $0.number == row.superNumber && row.superNumber != 0 }?.name)
            if row.superNumber == 0, let table = schema.tables["Z" + row.name.uppercased()] {
                for (column, type) in table.columns where column.hasPrefix("Z") && !column.hasPrefix("Z_") {
                    let name = String(column.dropFirst()).lowercased()
                    if type.contains("INT"), table.indexes.contains("\(table.name)_\(column)_INDEX"),
                        let destination = rows.first(where: {
                            $0.name.uppercased() == column.dropFirst() || $0.name.uppercased() == name.uppercased()
                        })
                    {
                        entity.relationships.append(RelationshipDescription(name: name, destination: destination.name, maxCount: 1))
                        continue
                    }
                    if column.range(of: #"^Z\d+_"#, options: .regularExpression) != nil { continue }
                    entity.attributes.append(AttributeDescription(name: name, type: Self.type(forDeclared: type)))
                }
            }
            entities.append(entity)
        }
        return ManagedObjectModel(entities: entities)
    }

    static func type(forDeclared declared: String) -> AttributeType {
        if declared.contains("INT") { return .integer64 }
        if declared.contains("CHAR") || declared.contains("TEXT") { return .string }
        if declared.contains("TIMESTAMP") { return .date }
        if declared.contains("FLOAT") || declared.contains("REAL") || declared.contains("DOUB") { return .double }
        if declared.contains("DECIMAL") { return .decimal }
        if declared.contains("BLOB") { return .binaryData }
        return .undefined
    }
}
