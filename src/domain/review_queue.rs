//! A student's review queue and the spaced-repetition rule that schedules
//! it: Leitner boxes.
//!
//! Every error the tutor logs (`mark_for_review`) in a session opened for a
//! student record becomes one item of that student's queue, in their own
//! words with the correct form. The rule, named so teachers can be told it:
//!
//! - a new item goes into box 1 and is due at once (the next review lesson
//!   gets it);
//! - mastered in a review (`mark_item_mastered`), it moves to the next box
//!   and is due again after that box's interval ([`BOX_INTERVAL_DAYS`]:
//!   1, 2, 4, 8, 16 days for boxes 1–5);
//! - mastered in the last box, it leaves the queue (`mastered_at` is set);
//! - offered in a review session that ended without it being mastered, it
//!   goes back to box 1, due after box 1's interval.
//!
//! Pure: the caller supplies the time. The items a review lesson offers are
//! named `q-<id>` ([`offer_id`]) so the model has an id to pass back, apart
//! from the lesson's own item ids (which may not contain a `q-` prefix
//! followed only by digits, see [`parse_offer_id`]).

use serde::{Deserialize, Serialize};

/// How many Leitner boxes an item climbs before it leaves the queue: five
/// successful reviews, spread over about a month, is the classic system's
/// measure of "learnt".
pub const BOXES: u8 = 5;

/// How long an item waits in each box (box 1 first) before it is due again,
/// in days: each success doubles the wait.
pub const BOX_INTERVAL_DAYS: [i64; BOXES as usize] = [1, 2, 4, 8, 16];

/// Seconds in a day.
pub const DAY_SECS: i64 = 86_400;

/// Most due items one review lesson's prompt offers a student, most overdue
/// first: each costs prompt tokens, and a lesson of 15 minutes gets through
/// about this many; the rest stay due for the next one.
pub const DUE_ITEMS_PER_LESSON: usize = 10;

/// The start of a queue item's id as a review lesson offers it (`q-12`).
pub const OFFER_PREFIX: &str = "q-";

/// Where an item stands: its box, when it is next due, and when it left the
/// queue (mastered past the last box), if it has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Schedule {
    /// The Leitner box, 1 to [`BOXES`].
    #[serde(rename = "box")]
    pub leitner_box: u8,
    /// When it is next due, Unix seconds.
    pub due_at: i64,
    /// When it left the queue, Unix seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mastered_at: Option<i64>,
}

/// How long an item waits in box `leitner_box` (clamped to 1..=[`BOXES`]),
/// in seconds.
pub fn interval_secs(leitner_box: u8) -> i64 {
    let index = usize::from(leitner_box.clamp(1, BOXES) - 1);
    BOX_INTERVAL_DAYS[index] * DAY_SECS
}

impl Schedule {
    /// A newly logged error's schedule: box 1, due at once.
    pub fn new_item(now: i64) -> Self {
        Self {
            leitner_box: 1,
            due_at: now,
            mastered_at: None,
        }
    }

    /// After the student mastered the item at `now`: the next box, due
    /// after its interval; past the last box, out of the queue (its due
    /// time kept as it was). An item already out stays out.
    pub fn mastered(self, now: i64) -> Self {
        if self.mastered_at.is_some() {
            return self;
        }
        if self.leitner_box >= BOXES {
            return Self {
                leitner_box: BOXES,
                mastered_at: Some(now),
                ..self
            };
        }
        let next = self.leitner_box.max(1) + 1;
        Self {
            leitner_box: next,
            due_at: now + interval_secs(next),
            mastered_at: None,
        }
    }

    /// After a review session offered the item and ended at `now` without
    /// the student mastering it: back to box 1, due after box 1's interval.
    /// An item already out stays out.
    pub fn missed(self, now: i64) -> Self {
        if self.mastered_at.is_some() {
            return self;
        }
        Self {
            leitner_box: 1,
            due_at: now + interval_secs(1),
            mastered_at: None,
        }
    }

    /// Whether the item is in the queue and due at `now`.
    pub fn is_due(&self, now: i64) -> bool {
        self.mastered_at.is_none() && self.due_at <= now
    }

    /// Whether it has left the queue.
    pub fn left_queue(&self) -> bool {
        self.mastered_at.is_some()
    }
}

/// The id a review lesson offers queue item `id` under (`q-12`).
pub fn offer_id(id: i64) -> String {
    format!("{OFFER_PREFIX}{id}")
}

/// The queue item an offered id names (`q-12` → 12), if it is one.
pub fn parse_offer_id(raw: &str) -> Option<i64> {
    let digits = raw.strip_prefix(OFFER_PREFIX)?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// One item of a student's review queue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QueueItem {
    /// Its id (offered to a review lesson as `q-<id>`).
    pub id: i64,
    /// The session it was logged in, while that session is kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// grammar, pronunciation, vocabulary or cultural.
    pub error_type: String,
    /// What the student said, in their own words.
    pub student_said: String,
    /// The correct form.
    pub correct_form: String,
    /// Why, as the tutor explained it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explanation: Option<String>,
    /// 1 (slip) to 10 (blocks understanding).
    pub severity: u8,
    /// Its box and due time.
    #[serde(flatten)]
    pub schedule: Schedule,
    /// When a review last moved it, Unix seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_reviewed_at: Option<i64>,
    /// When it was logged, Unix seconds.
    pub created_at: i64,
}

impl QueueItem {
    /// The id a review lesson offers it under.
    pub fn offer_id(&self) -> String {
        offer_id(self.id)
    }
}

/// The items of `items` due at `now`, most overdue first (then oldest id),
/// at most [`DUE_ITEMS_PER_LESSON`]: what a review lesson offers.
pub fn due_for_lesson(items: &[QueueItem], now: i64) -> Vec<QueueItem> {
    let mut due: Vec<&QueueItem> = items.iter().filter(|i| i.schedule.is_due(now)).collect();
    due.sort_by_key(|i| (i.schedule.due_at, i.id));
    due.into_iter()
        .take(DUE_ITEMS_PER_LESSON)
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const NOW: i64 = 1_700_000_000;

    fn item(id: i64, due_at: i64, mastered_at: Option<i64>) -> QueueItem {
        QueueItem {
            id,
            session_id: None,
            error_type: "grammar".into(),
            student_said: "yo soy hambre".into(),
            correct_form: "tengo hambre".into(),
            explanation: None,
            severity: 5,
            schedule: Schedule {
                leitner_box: 1,
                due_at,
                mastered_at,
            },
            last_reviewed_at: None,
            created_at: NOW - 100,
        }
    }

    #[test]
    fn a_new_item_is_in_box_one_and_due_at_once() {
        let s = Schedule::new_item(NOW);
        assert_eq!((s.leitner_box, s.due_at, s.mastered_at), (1, NOW, None));
        assert!(s.is_due(NOW));
    }

    #[test]
    fn mastering_climbs_the_boxes_with_doubling_intervals_then_leaves_the_queue() {
        let mut s = Schedule::new_item(NOW);
        let mut waits = Vec::new();
        for _ in 1..BOXES {
            s = s.mastered(NOW);
            waits.push((s.due_at - NOW) / DAY_SECS);
        }
        assert_eq!(waits, [2, 4, 8, 16]);
        assert_eq!(s.leitner_box, BOXES);
        let out = s.mastered(NOW + 5);
        assert_eq!(out.mastered_at, Some(NOW + 5));
        assert!(out.left_queue() && !out.is_due(i64::MAX));
        assert_eq!(
            out.mastered(NOW + 9),
            out,
            "an item out of the queue stays out"
        );
    }

    #[test]
    fn a_missed_item_goes_back_to_box_one_due_after_a_day() {
        let s = Schedule::new_item(NOW).mastered(NOW).mastered(NOW);
        assert_eq!(s.leitner_box, 3);
        let back = s.missed(NOW + 10);
        assert_eq!((back.leitner_box, back.due_at), (1, NOW + 10 + DAY_SECS));
    }

    #[test]
    fn offer_ids_round_trip_and_lesson_ids_are_not_offers() {
        assert_eq!(offer_id(12), "q-12");
        assert_eq!(parse_offer_id("q-12"), Some(12));
        for other in ["q-", "q-1a", "fui", "q-+1", "Q-1"] {
            assert_eq!(parse_offer_id(other), None, "{other}");
        }
    }

    #[test]
    fn a_lesson_gets_the_most_overdue_items_first_and_at_most_its_share() {
        let mut items: Vec<QueueItem> = (0..20).map(|i| item(i, NOW - i * 10, None)).collect();
        items.push(item(100, NOW + 1, None));
        items.push(item(101, NOW - 10_000, Some(NOW)));
        let due = due_for_lesson(&items, NOW);
        assert_eq!(due.len(), DUE_ITEMS_PER_LESSON);
        assert_eq!(due[0].id, 19, "the most overdue comes first");
        assert!(
            due.iter().all(|i| i.id < 100),
            "not yet due or mastered: left out"
        );
    }

    #[test]
    fn a_queue_item_serialises_its_box_flat() {
        let v = serde_json::to_value(item(3, NOW, None)).unwrap();
        assert_eq!(v["box"], 1);
        assert_eq!(v["dueAt"], NOW);
        assert!(v.get("masteredAt").is_none());
    }

    fn step() -> impl Strategy<Value = (bool, i64)> {
        (any::<bool>(), 0i64..40 * DAY_SECS)
    }

    proptest! {
        #[test]
        fn boxes_stay_in_bounds_and_due_dates_never_precede_the_review(
            steps in proptest::collection::vec(step(), 0..30)
        ) {
            let mut now = NOW;
            let mut s = Schedule::new_item(now);
            for (mastered, wait) in steps {
                now += wait;
                let next = if mastered { s.mastered(now) } else { s.missed(now) };
                prop_assert!((1..=BOXES).contains(&next.leitner_box));
                if next.mastered_at.is_none() {
                    prop_assert!(next.due_at > now, "due after the review that moved it");
                }
                if s.mastered_at.is_some() {
                    prop_assert_eq!(next, s);
                }
                s = next;
            }
        }

        #[test]
        fn a_later_review_never_makes_an_item_due_sooner(
            leitner_box in 1u8..=BOXES, now in 0i64..1_000_000_000, later in 0i64..DAY_SECS * 100
        ) {
            let s = Schedule { leitner_box, due_at: now, mastered_at: None };
            for f in [Schedule::mastered, Schedule::missed] {
                let (early, late) = (f(s, now), f(s, now + later));
                prop_assert!(late.due_at >= early.due_at);
            }
        }

        #[test]
        fn mastering_never_lowers_the_box(leitner_box in 1u8..=BOXES, now in 0i64..1_000_000_000) {
            let s = Schedule { leitner_box, due_at: now, mastered_at: None };
            let next = s.mastered(now);
            prop_assert!(next.leitner_box >= s.leitner_box);
            prop_assert_eq!(next.left_queue(), leitner_box == BOXES);
        }
    }
}
