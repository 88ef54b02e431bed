import { DateTime, type DurationLikeObject } from 'luxon';

/** A span of capture times, Unix milliseconds, both ends inclusive; an open end is unbounded. */
export interface TimeWindow {
  from?: number;
  to?: number;
  /** The words the window came from, as they appear in the question (for logs and the offline answer). */
  phrase: string;
}

/** What the time words are read against. */
export interface TimeContext {
  /** The present, Unix milliseconds. */
  now: number;
  /** IANA time zone the question's clock times and days are in. */
  zone: string;
  /** Half-width of the window around a clock time ("at 14:05"), milliseconds. */
  atToleranceMs: number;
}

const NUMBER_WORDS: Record<string, number> = {
  a: 1,
  an: 1,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  fifteen: 15,
  twenty: 20,
  thirty: 30,
  few: 3,
  couple: 2,
};

const UNITS: Record<string, keyof DurationLikeObject> = {
  sec: 'seconds',
  second: 'seconds',
  min: 'minutes',
  minute: 'minutes',
  hr: 'hours',
  hour: 'hours',
  day: 'days',
  week: 'weeks',
};

/** Parts of a day, as [start hour, end hour) in local time. */
const DAY_PARTS: Record<string, [number, number]> = {
  morning: [5, 12],
  afternoon: [12, 18],
  evening: [18, 24],
  night: [18, 24],
  tonight: [18, 24],
};

const COUNT = String.raw`(\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten|fifteen|twenty|thirty|few|couple(?: of)?)`;
const UNIT = String.raw`(sec(?:ond)?s?|min(?:ute)?s?|hours?|hrs?|days?|weeks?)`;
/** "14:05", "2pm", "2:05 pm", "14h05"; hours and minutes captured, then am/pm. */
const CLOCK = String.raw`(\d{1,2})(?:[:h.](\d{2}))?\s*(am|pm|a\.m\.|p\.m\.)?`;

const LAST_SPAN = new RegExp(
  String.raw`\b(?:in|during|over|within|for)?\s*(?:the\s+)?(?:last|past)\s+(?:${COUNT}\s+)?${UNIT}\b`,
  'i',
);
const AGO = new RegExp(String.raw`\b${COUNT}\s+${UNIT}\s+ago\b`, 'i');
const BETWEEN = new RegExp(String.raw`\bbetween\s+${CLOCK}\s+and\s+${CLOCK}`, 'i');
const SINCE = new RegExp(String.raw`\bsince\s+${CLOCK}`, 'i');
const AT = new RegExp(String.raw`\b(?:at|around|about)\s+${CLOCK}`, 'i');
const DAY_WORD = /\b(today|yesterday|this\s+(?:morning|afternoon|evening)|tonight|last\s+night)\b/i;
const DAY_PART_AFTER = /\b(yesterday|today)\s+(morning|afternoon|evening|night)\b/i;

function countOf(word: string | undefined): number {
  if (word === undefined) return 1;
  const key = word.toLowerCase().replace(/ of$/, '');
  return /^\d+$/.test(key) ? Number(key) : (NUMBER_WORDS[key] ?? 1);
}

function unitOf(word: string): keyof DurationLikeObject {
  return UNITS[word.toLowerCase().replace(/s$/, '')];
}

/** 24-hour [hour, minute] of a clock match, or undefined when it is not a time of day. */
function clockTime(
  hour: string,
  minute: string | undefined,
  meridiem: string | undefined,
): [number, number] | undefined {
  let h = Number(hour);
  const m = minute === undefined ? 0 : Number(minute);
  // A bare number with neither minutes nor am/pm ("at 5") is too ambiguous to be a time of day.
  if (minute === undefined && meridiem === undefined) return undefined;
  if (m > 59) return undefined;
  if (meridiem) {
    if (h < 1 || h > 12) return undefined;
    const pm = meridiem.toLowerCase().startsWith('p');
    h = (h % 12) + (pm ? 12 : 0);
  } else if (h > 23) return undefined;
  return [h, m];
}

/** Which day the question anchors clock times to: 0 today, -1 yesterday; undefined when it names none. */
function dayOffset(question: string): number | undefined {
  const match = /\b(today|yesterday|last\s+night)\b/i.exec(question);
  if (!match) return undefined;
  return match[1].toLowerCase() === 'today' ? 0 : -1;
}

/**
 * The day a clock time refers to: the named day, else today, or yesterday when today's would still lie in the future
 * ("since 23:00" asked at 01:00 means last night).
 */
function atClock(ctx: TimeContext, question: string, hm: [number, number]): DateTime {
  const today = DateTime.fromMillis(ctx.now, { zone: ctx.zone }).startOf('day');
  const named = dayOffset(question);
  const day = today.plus({ days: named ?? 0 });
  const time = day.set({ hour: hm[0], minute: hm[1] });
  return named === undefined && time.toMillis() > ctx.now ? time.minus({ days: 1 }) : time;
}

function whole(ctx: TimeContext, offsetDays: number, part?: [number, number]): { from: number; to: number } {
  const day = DateTime.fromMillis(ctx.now, { zone: ctx.zone }).startOf('day').plus({ days: offsetDays });
  const start = part ? day.set({ hour: part[0] }) : day;
  const end = part ? day.plus({ hours: part[1] }) : day.plus({ days: 1 });
  const to = end.toMillis() - 1;
  // A span still under way ends now; one wholly ahead (this evening, asked in the morning) keeps its end.
  return { from: start.toMillis(), to: start.toMillis() <= ctx.now ? Math.min(to, ctx.now) : to };
}

/** The window of a day word ("yesterday", "this morning", "yesterday afternoon", "last night"). */
function dayWindow(ctx: TimeContext, question: string): TimeWindow | undefined {
  const withPart = DAY_PART_AFTER.exec(question);
  if (withPart) {
    const offset = withPart[1].toLowerCase() === 'today' ? 0 : -1;
    return { ...whole(ctx, offset, DAY_PARTS[withPart[2].toLowerCase()]), phrase: withPart[0] };
  }
  const match = DAY_WORD.exec(question);
  if (!match) return undefined;
  const word = match[1].toLowerCase().replace(/\s+/g, ' ');
  if (word === 'today') return { ...whole(ctx, 0), phrase: match[0] };
  if (word === 'yesterday') return { ...whole(ctx, -1), phrase: match[0] };
  if (word === 'last night') return { ...whole(ctx, -1, DAY_PARTS.night), phrase: match[0] };
  const part = DAY_PARTS[word.replace(/^this /, '')];
  return { ...whole(ctx, 0, part), phrase: match[0] };
}

/**
 * Reads the time words of a question as a window of capture times: "in the last 10 minutes", "past hour",
 * "5 minutes ago", "since 14:00", "at 14:05" (± the tolerance), "between 9am and 11am", "today", "yesterday",
 * "this morning", "yesterday afternoon", "last night" (with "since": up to now); a clock time with "yesterday" is
 * yesterday's. Undefined when the question has none. Pure: the present and the zone come from `ctx`.
 */
export function parseTimeWindow(question: string, ctx: TimeContext): TimeWindow | undefined {
  const last = LAST_SPAN.exec(question);
  if (last) {
    const span = { [unitOf(last[2])]: countOf(last[1]) };
    const from = DateTime.fromMillis(ctx.now, { zone: ctx.zone }).minus(span).toMillis();
    return { from, to: ctx.now, phrase: last[0].trim() };
  }
  const ago = AGO.exec(question);
  if (ago) {
    const at = DateTime.fromMillis(ctx.now, { zone: ctx.zone })
      .minus({ [unitOf(ago[2])]: countOf(ago[1]) })
      .toMillis();
    return { from: at - ctx.atToleranceMs, to: Math.min(at + ctx.atToleranceMs, ctx.now), phrase: ago[0] };
  }
  const between = BETWEEN.exec(question);
  if (between) {
    const start = clockTime(between[1], between[2], between[3] ?? between[6]);
    const end = clockTime(between[4], between[5], between[6] ?? between[3]);
    if (start && end) {
      const from = atClock(ctx, question, start);
      let to = from.set({ hour: end[0], minute: end[1] });
      if (to < from) to = to.plus({ days: 1 });
      return { from: from.toMillis(), to: to.toMillis(), phrase: between[0] };
    }
  }
  const since = SINCE.exec(question);
  if (since) {
    const hm = clockTime(since[1], since[2], since[3]);
    if (hm) return { from: atClock(ctx, question, hm).toMillis(), to: ctx.now, phrase: since[0].trim() };
  }
  const at = AT.exec(question);
  if (at) {
    const hm = clockTime(at[1], at[2], at[3]);
    if (hm) {
      const centre = atClock(ctx, question, hm).toMillis();
      return { from: centre - ctx.atToleranceMs, to: centre + ctx.atToleranceMs, phrase: at[0].trim() };
    }
  }
  const day = dayWindow(ctx, question);
  // "since yesterday", "since this morning": from the start of that span up to now.
  if (day && new RegExp(String.raw`\bsince\s+${day.phrase}`, 'i').test(question)) {
    return { from: day.from, to: ctx.now, phrase: `since ${day.phrase}` };
  }
  return day;
}
