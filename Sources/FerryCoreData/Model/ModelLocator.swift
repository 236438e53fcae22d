import FerryCore
import FerryPlist
import Foundation
import GRDB

/// Finds the model of a store: a path given by the user, model files beside the store, the store's own model cache,
/// or, last, inference from the SQLite schema.
enum ModelLocator {
    /// How well a model fits a store: entities and columns that match, and those that do not.
    struct Fit: Comparable {
        var matched = 0
        var missing = 0
        var perfect: Bool { missing == 0 && matched > 0 }
        static func < (lhs: Fit, rhs: Fit) -> Bool { (lhs.matched - lhs.missing) < (rhs.matched - rhs.missing) }
    }

    static func load(
        _ choice: ModelChoice, files: StoreFiles, metadata: StoreMetadata, schema: SQLiteSchema, db: Database
    ) throws -> LoadedModel {
        switch choice {
        case .file(let path):
            let candidates = try candidatesAt(path, metadata: metadata, schema: schema)
            guard let best = candidates.max(by: { $0.fit < $1.fit }) else {
                throw CoreDataError(.modelNotFound, "\(path): no Core Data model there (expected .xcdatamodeld, .xcdatamodel, .momd or .mom)")
            }
            var notes = best.notes
            if !best.fit.perfect {
                notes.append("the model at \(path) does not fully match the store (\(best.fit.missing) entities or columns missing)")
            }
            return LoadedModel(model: best.model, source: best.source, notes: notes, choices: best.choices)
        case .modelCache:
            guard let model = try cachedModel(files: files, db: db) else {
                throw CoreDataError(
                    .modelNotFound, "\(files.store) has no model cache (Z_MODELCACHE; stores before about 2017 lack it); give the model with --model")
            }
            return LoadedModel(model: model, source: .modelCache, notes: [])
        case .inferred:
            return try inferred(metadata: metadata, schema: schema, db: db, notes: [])
        case .automatic:
            // Model files beside the store (or one folder up), used when they fit the store exactly.
            var passedOver: [String] = []
            for path in discover(near: files.store) {
                guard let candidates = try? candidatesAt(path, metadata: metadata, schema: schema),
                    let best = candidates.max(by: { $0.fit < $1.fit })
                else { continue }
                if best.fit.perfect { return LoadedModel(model: best.model, source: best.source, notes: best.notes, choices: best.choices) }
                passedOver.append("\(path) does not match the store (\(best.fit.missing) entities or columns missing)")
            }
            do {
                if let model = try cachedModel(files: files, db: db) {
                    return LoadedModel(model: model, source: .modelCache, notes: passedOver)
                }
            } catch let error as CoreDataError where error.code == .invalidModel {
                passedOver.append("the store's model cache (Z_MODELCACHE) cannot be read (\(error.message)); passed over")
            }
            return try inferred(metadata: metadata, schema: schema, db: db, notes: passedOver)
        }
    }

    /// The model in the store's `Z_MODELCACHE` (raw DEFLATE of a keyed archive), if it has one.
    static func cachedModel(files: StoreFiles, db: Database) throws -> ManagedObjectModel? {
        guard try db.tableExists("Z_MODELCACHE"),
            let blob = try DatabaseValue.fetchOne(db, sql: "SELECT Z_CONTENT FROM Z_MODELCACHE LIMIT 1")?.bytesValue
        else {
            return nil
        }
        let source = "\(files.store) Z_MODELCACHE"
        return try CompiledModelReader.read(try RawInflate.inflate(blob, source: source), file: source)
    }

    static func inferred(metadata: StoreMetadata, schema: SQLiteSchema, db: Database, notes: [String]) throws -> LoadedModel {
        let (model, inferenceNotes) = try SchemaInference.infer(metadata: metadata, schema: schema, db: db)
        return LoadedModel(
            model: model, source: .inferred,
            notes: notes + ["no model was used: entity, attribute and relationship names and types are guessed from the SQLite schema"]
                + inferenceNotes)
    }

    /// Model bundles and files in the store's folder and the folder above.
    static func discover(near store: String) -> [String] {
        let folder = URL(fileURLWithPath: store).deletingLastPathComponent()
        var found: [String] = []
        for directory in [folder, folder.deletingLastPathComponent()] {
            let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).sorted()
            for suffix in [".xcdatamodeld", ".xcdatamodel", ".momd", ".mom"] {
                found += names.filter { $0.hasSuffix(suffix) }.map { directory.appendingPathComponent($0).path }
            }
        }
        return found
    }

    struct Candidate {
        var model: ManagedObjectModel
        var source: ModelSource
        var fit: Fit
        var notes: [String] = []
        var choices: [String] = []
    }

    /// Every model at a path (all versions of a bundle), each with its fit.
    static func candidatesAt(_ path: String, metadata: StoreMetadata, schema: SQLiteSchema) throws -> [Candidate] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw CoreError(.fileNotFound, "\(path): no such model; check --model")
        }
        func fit(_ model: ManagedObjectModel) -> Fit { Self.fit(model, metadata: metadata, schema: schema) }
        if path.hasSuffix(".xcdatamodeld") {
            let current = currentVersion(of: path)
            let versions = ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).filter { $0.hasSuffix(".xcdatamodel") }.sorted()
            var candidates: [Candidate] = []
            for version in versions {
                guard let model = try? readXCDataModel("\(path)/\(version)") else { continue }
                let name = String(version.dropLast(".xcdatamodel".count))
                var candidate = Candidate(model: model, source: .xcdatamodeld(path: path, version: name), fit: fit(model))
                if version == current { candidate.fit.matched += 1 }  // the current version wins ties
                candidates.append(candidate)
            }
            return candidates
        }
        if path.hasSuffix(".xcdatamodel") || (!isDirectory.boolValue && URL(fileURLWithPath: path).lastPathComponent == "contents") {
            let model = try readXCDataModel(path)
            return [Candidate(model: model, source: .xcdatamodel(path: path), fit: fit(model))]
        }
        if path.hasSuffix(".momd") {
            let moms = ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).filter { $0.hasSuffix(".mom") }.sorted()
            // VersionInfo.plist names the version whose entity hashes are the store's.
            let byHashes = versionMatchingHashes(momd: path, metadata: metadata)
            var candidates: [Candidate] = []
            for mom in moms {
                let file = "\(path)/\(mom)"
                guard let model = try? CompiledModelReader.read(try InputFile.contents(of: file, limit: 64 << 20), file: file) else { continue }
                var candidate = Candidate(model: model, source: .compiled(path: file), fit: fit(model))
                if byHashes == String(mom.dropLast(4)) {
                    candidate.fit.matched += 1000
                    candidate.choices.append("version \(mom) chosen by the store's model version hashes")
                }
                candidates.append(candidate)
            }
            return candidates
        }
        if path.hasSuffix(".mom") {
            let model = try CompiledModelReader.read(try InputFile.contents(of: path, limit: 64 << 20), file: path)
            return [Candidate(model: model, source: .compiled(path: path), fit: fit(model))]
        }
        throw CoreDataError(.modelNotFound, "\(path): not a model (expected .xcdatamodeld, .xcdatamodel, .momd or .mom)")
    }

    static func readXCDataModel(_ path: String) throws -> ManagedObjectModel {
        let contents = path.hasSuffix("contents") ? path : "\(path)/contents"
        guard FileManager.default.fileExists(atPath: contents) else {
            if FileManager.default.fileExists(atPath: "\(path)/elements") {
                throw CoreDataError(
                    .invalidModel,
                    "\(path) is an Xcode 3 model (a binary 'elements' archive), which Ferry does not read; use its compiled .mom or the store's model cache"
                )
            }
            throw CoreDataError(.modelNotFound, "\(path): no 'contents' file")
        }
        return try ModelXMLReader.read(try InputFile.contents(of: contents, limit: 64 << 20), file: contents)
    }

    /// The version `.xccurrentversion` names, without its extension.
    static func currentVersion(of bundle: String) -> String? {
        guard let bytes = try? InputFile.contents(of: "\(bundle)/.xccurrentversion", limit: 1 << 20),
            case .string(let name)? = try? PlistDocument(bytes: bytes).value()["_XCCurrentVersionName"]
        else { return nil }
        return name
    }

    /// The `.mom` name (without extension) whose VersionInfo hashes equal the store's, if one does.
    static func versionMatchingHashes(momd: String, metadata: StoreMetadata) -> String? {
        guard !metadata.modelVersionHashes.isEmpty,
            let bytes = try? InputFile.contents(of: "\(momd)/VersionInfo.plist", limit: 16 << 20),
            case .dictionary(let versions)? = try? PlistDocument(bytes: bytes).value()["NSManagedObjectModel_VersionHashes"]
        else { return nil }
        for version in versions {
            guard case .dictionary(let hashes) = version.value else { continue }
            var table: [String: [UInt8]] = [:]
            for entry in hashes { if case .data(let bytes) = entry.value { table[entry.key] = bytes } }
            if table == metadata.modelVersionHashes { return version.key }
        }
        return nil
    }

    /// How well a model fits a store's entities and columns.
    static func fit(_ model: ManagedObjectModel, metadata: StoreMetadata, schema: SQLiteSchema) -> Fit {
        var fit = Fit()
        let rows = metadata.entityRows.filter { !$0.isAncillary }
        for row in rows {
            guard let entity = model.entity(forStoreName: row.name) else {
                fit.missing += 1
                continue
            }
            fit.matched += 1
            let root = model.ancestry(of: entity).last ?? entity
            let rootRow = rows.first { model.entity(forStoreName: $0.name)?.name == root.name }
            guard let table = schema.tables[StoreSchema.tableName(storeName: rootRow?.name ?? root.name, entity: root, sqlite: schema)] else {
                fit.missing += 1
                continue
            }
            for attribute in entity.attributes where !attribute.isTransient {
                if table.columnSet.contains("Z" + attribute.name.uppercased())
                    || attribute.renamingIdentifier.map({ table.columnSet.contains("Z" + $0.uppercased()) }) == true
                {
                    fit.matched += 1
                } else {
                    fit.missing += 1
                }
            }
        }
        fit.missing += model.entities.filter { entity in !rows.contains { model.entity(forStoreName: $0.name)?.name == entity.name } }.count
        return fit
    }
}
