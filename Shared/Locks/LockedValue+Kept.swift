extension LockedValue {
    /// The value kept under `key`, made by `make` (with the lock held, so once) the first time
    /// `key` is asked for: handles that are costly to make per use and few enough to keep, such
    /// as a metric's counter per label set.
    @inlinable
    public func kept<Key: Hashable & Sendable, Kept: Sendable>(_ key: Key, orMake make: () -> Kept) -> Kept where Value == [Key: Kept] {
        withLock { kept in
            if let existing = kept[key] { return existing }
            let made = make()
            kept[key] = made
            return made
        }
    }
}
