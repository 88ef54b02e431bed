/**
 * The words of detected object classes: how descriptions name them (singular, plural, counts) and which query words
 * name them (plurals and a few synonyms). Classes are the detector's labels (COCO's 80 for the default model); a label
 * not listed here is still described and matched by its own name.
 */

/** Plurals that are not the label plus `s`/`es`. */
const IRREGULAR_PLURALS: Readonly<Record<string, string>> = {
  person: 'people',
  mouse: 'mice',
  knife: 'knives',
  sheep: 'sheep',
  skis: 'skis',
  scissors: 'scissors',
};

/** Query words (besides a label and its plural) that name a class. */
const SYNONYMS: Readonly<Record<string, string>> = {
  persons: 'person',
  human: 'person',
  humans: 'person',
  man: 'person',
  men: 'person',
  woman: 'person',
  women: 'person',
  pedestrian: 'person',
  pedestrians: 'person',
  child: 'person',
  children: 'person',
  kid: 'person',
  kids: 'person',
  vehicle: 'car',
  vehicles: 'car',
  automobile: 'car',
  automobiles: 'car',
  motorbike: 'motorcycle',
  motorbikes: 'motorcycle',
  scooter: 'motorcycle',
  bike: 'bicycle',
  bikes: 'bicycle',
  cyclist: 'bicycle',
  lorry: 'truck',
  lorries: 'truck',
  plane: 'airplane',
  planes: 'airplane',
  aeroplane: 'airplane',
  puppy: 'dog',
  kitten: 'cat',
  mug: 'cup',
  mugs: 'cup',
  coach: 'bus',
  sofa: 'couch',
  television: 'tv',
  phone: 'cell phone',
  mobile: 'cell phone',
  table: 'dining table',
  ship: 'boat',
  bag: 'handbag',
};

const NUMBER_WORDS = ['no', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten'];

/** The plural of a class label ("bus" → "buses", "person" → "people", "wine glass" → "wine glasses"). */
export function pluralOf(label: string): string {
  const irregular = IRREGULAR_PLURALS[label];
  if (irregular) return irregular;
  if (/(s|sh|ch|x|z)$/.test(label)) return `${label}es`;
  if (/[^aeiou]y$/.test(label)) return `${label.slice(0, -1)}ies`;
  return `${label}s`;
}

/** "a bus", "an apple", "two people", "12 cars". */
export function countedName(label: string, count: number): string {
  if (count === 1) return `${/^[aeiou]/.test(label) ? 'an' : 'a'} ${label}`;
  return `${NUMBER_WORDS[count] ?? String(count)} ${pluralOf(label)}`;
}

/**
 * The classes `text` names, for the given label vocabulary: each label by itself, its plural and its synonyms;
 * labels of two words ("dining table") are matched as a phrase. Returns labels in the order they are named.
 */
export function labelsNamed(text: string, vocabulary: readonly string[]): string[] {
  const words = text.toLowerCase().match(/[a-z]+/g) ?? [];
  const phrase = ` ${words.join(' ')} `;
  const found: Array<{ at: number; label: string }> = [];
  const add = (label: string, at: number) => {
    if (at >= 0 && vocabulary.includes(label) && !found.some((f) => f.label === label)) found.push({ at, label });
  };
  // Longer labels first, so "wine glass" is taken before a shorter label could claim part of it.
  for (const label of [...vocabulary].sort((a, b) => b.length - a.length)) {
    for (const form of [label, pluralOf(label)]) add(label, phrase.indexOf(` ${form} `));
  }
  for (const word of words) {
    const label = SYNONYMS[word];
    if (label) add(label, phrase.indexOf(` ${word} `));
  }
  return found.sort((a, b) => a.at - b.at).map((f) => f.label);
}

/** The 80 COCO classes in the default detector's order: the vocabulary queries are parsed with. */
export const COCO_LABELS: readonly string[] = [
  'person',
  'bicycle',
  'car',
  'motorcycle',
  'airplane',
  'bus',
  'train',
  'truck',
  'boat',
  'traffic light',
  'fire hydrant',
  'stop sign',
  'parking meter',
  'bench',
  'bird',
  'cat',
  'dog',
  'horse',
  'sheep',
  'cow',
  'elephant',
  'bear',
  'zebra',
  'giraffe',
  'backpack',
  'umbrella',
  'handbag',
  'tie',
  'suitcase',
  'frisbee',
  'skis',
  'snowboard',
  'sports ball',
  'kite',
  'baseball bat',
  'baseball glove',
  'skateboard',
  'surfboard',
  'tennis racket',
  'bottle',
  'wine glass',
  'cup',
  'fork',
  'knife',
  'spoon',
  'bowl',
  'banana',
  'apple',
  'sandwich',
  'orange',
  'broccoli',
  'carrot',
  'hot dog',
  'pizza',
  'donut',
  'cake',
  'chair',
  'couch',
  'potted plant',
  'bed',
  'dining table',
  'toilet',
  'tv',
  'laptop',
  'mouse',
  'remote',
  'keyboard',
  'cell phone',
  'microwave',
  'oven',
  'toaster',
  'sink',
  'refrigerator',
  'book',
  'clock',
  'vase',
  'scissors',
  'teddy bear',
  'hair drier',
  'toothbrush',
];
