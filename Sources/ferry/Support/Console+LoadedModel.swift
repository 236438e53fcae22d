import FerryCoreData
import Logging

extension Console {
    /// Says which model a store is read with: the choice at info level (`-v`), what a user should doubt as warnings.
    func logModel(_ store: CoreDataStore) {
        logger.info("model: \(store.model.source.description)")
        for choice in store.model.choices { logger.info("model: \(choice)") }
        for note in store.model.notes { warning(note) }
    }
}
