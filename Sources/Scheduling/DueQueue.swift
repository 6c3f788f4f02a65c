// Which feed is due next: a priority queue ordered by due time, with O(log n) updates and removals by key, so a
// service sleeps until the earliest due time instead of waking on fixed ticks.
import Foundation

/// Keys ordered by their due time, earliest first; a key is in the queue at most once.
///
/// Scheduling, rescheduling and removing a key, and taking the earliest, cost O(log n); looking at the earliest costs
/// O(1). Ties are broken by insertion order, so feeds due at the same moment come out in the order they were
/// scheduled (list order on a first run). Not thread-safe: one owner.
public struct DueQueue<Key: Hashable> {
    private struct Entry {
        var key: Key
        var due: Date
        var order: UInt64
    }

    private var heap: [Entry] = []
    private var positions: [Key: Int] = [:]
    private var nextOrder: UInt64 = 0

    /// An empty queue.
    public init() {}

    /// How many keys are scheduled.
    public var count: Int { heap.count }

    /// Whether nothing is scheduled.
    public var isEmpty: Bool { heap.isEmpty }

    /// The earliest key and its due time, without taking it.
    public var first: (key: Key, due: Date)? { heap.first.map { ($0.key, $0.due) } }

    /// When `key` is due, if it is scheduled.
    public func due(_ key: Key) -> Date? { positions[key].map { heap[$0].due } }

    /// Whether `key` is scheduled.
    public func contains(_ key: Key) -> Bool { positions[key] != nil }

    /// Schedules `key` at `due`, or moves it there if it is already scheduled (it then goes behind other keys due at
    /// the same time).
    public mutating func schedule(_ key: Key, at due: Date) {
        let order = nextOrder
        nextOrder += 1
        if let position = positions[key] {
            heap[position].due = due
            heap[position].order = order
            siftUp(siftDown(position))
        } else {
            heap.append(Entry(key: key, due: due, order: order))
            positions[key] = heap.count - 1
            siftUp(heap.count - 1)
        }
    }

    /// Removes `key`; returns its due time when it was scheduled.
    @discardableResult
    public mutating func remove(_ key: Key) -> Date? {
        guard let position = positions[key] else { return nil }
        let due = heap[position].due
        removeEntry(at: position)
        return due
    }

    /// Takes the earliest key if it is due at or before `now`.
    public mutating func popDue(now: Date) -> (key: Key, due: Date)? {
        guard let first = heap.first, first.due <= now else { return nil }
        removeEntry(at: 0)
        return (first.key, first.due)
    }

    /// Every key due at or before `now`, earliest first, taken out of the queue.
    public mutating func popAllDue(now: Date) -> [(key: Key, due: Date)] {
        var due: [(key: Key, due: Date)] = []
        while let next = popDue(now: now) { due.append(next) }
        return due
    }

    /// How many keys are due at or before `date` (O(n); for status lines, not for the hot path).
    public func countDue(before date: Date) -> Int {
        heap.reduce(0) { $0 + ($1.due <= date ? 1 : 0) }
    }

    private mutating func removeEntry(at position: Int) {
        let removed = heap[position].key
        let last = heap.count - 1
        if position != last {
            heap.swapAt(position, last)
            positions[heap[position].key] = position
        }
        heap.removeLast()
        positions[removed] = nil
        if position < heap.count { siftUp(siftDown(position)) }
    }

    private func precedes(_ a: Entry, _ b: Entry) -> Bool {
        a.due != b.due ? a.due < b.due : a.order < b.order
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard precedes(heap[child], heap[parent]) else { break }
            heap.swapAt(child, parent)
            positions[heap[child].key] = child
            positions[heap[parent].key] = parent
            child = parent
        }
    }

    /// Moves the entry at `start` down to its place; returns where it ended.
    private mutating func siftDown(_ start: Int) -> Int {
        var parent = start
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < heap.count, precedes(heap[left], heap[smallest]) { smallest = left }
            if right < heap.count, precedes(heap[right], heap[smallest]) { smallest = right }
            guard smallest != parent else { return parent }
            heap.swapAt(parent, smallest)
            positions[heap[parent].key] = parent
            positions[heap[smallest].key] = smallest
            parent = smallest
        }
    }
}
