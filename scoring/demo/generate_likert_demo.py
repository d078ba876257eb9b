"""Regenerates likert_demo_items.jsonl and likert_demo_ratings.csv (run from scoring/demo/). The sentences were
written for StyleCrowd; the ratings are illustrative, made up by this script, not collected from people."""
import csv
import json
import random

# (source, reference, target_style, {system: rewrite})  — sentences written for StyleCrowd's demo.
ROWS = [
 ("hey r u coming to the meeting tmrw or nah", "Will you be attending the meeting tomorrow?", "formal", {
   "copycat": "hey are you coming to the meeting tmrw or nah",
   "formalizer": "Will you be attending tomorrow's meeting?",
   "drifter": "Please confirm your attendance at the annual conference.",
   "overeager": ("I would be most grateful to learn whether you intend to grace tomorrow's meeting "
                 "with your presence.")}),
 ("gonna be late, traffic is crazy lol", "I am going to be late because the traffic is heavy.", "formal", {
   "copycat": "gonna be late, traffic is crazy",
   "formalizer": "I will be late, as the traffic is very heavy.",
   "drifter": "I will arrive early this morning.",
   "overeager": "Regrettably, owing to exceptionally congested roads, my arrival shall be somewhat delayed."}),
 ("thx for the help yesterday, u saved me", "Thank you for your help yesterday; you saved me.", "formal", {
   "copycat": "thx for the help yesterday, you saved me",
   "formalizer": "Thank you for your help yesterday; you saved me a great deal of trouble.",
   "drifter": "Thank you for your invitation to dinner.",
   "overeager": "Please accept my sincerest gratitude for the invaluable assistance you so generously provided."}),
 ("can u send me the report asap", "Could you please send me the report as soon as possible?", "formal", {
   "copycat": "can you send me the report asap",
   "formalizer": "Could you please send me the report as soon as possible?",
   "drifter": "Could you please review the budget next month?",
   "overeager": "I would greatly appreciate it if the report could be forwarded to me at your earliest convenience."}),
 ("idk what ur talking about tbh", "To be honest, I do not know what you are talking about.", "formal", {
   "copycat": "idk what you're talking about tbh",
   "formalizer": "To be honest, I do not understand what you are referring to.",
   "drifter": "I fully agree with your proposal.",
   "overeager": "In all candour, the matter to which you allude remains entirely obscure to me."}),
 ("my laptop died again, so annoying", "My laptop has stopped working again, which is very frustrating.", "formal", {
   "copycat": "my laptop died again, so annoying",
   "formalizer": "My laptop has stopped working again, which is quite frustrating.",
   "drifter": "My new phone works perfectly.",
   "overeager": "Most vexingly, my portable computer has once more ceased to function entirely."}),
 ("We regret to inform you that the event has been cancelled.", "sorry, the event got cancelled", "informal", {
   "copycat": "We regret to inform you that the event has been cancelled.",
   "formalizer": "sorry guys, the event's been cancelled",
   "drifter": "yay the party is on tonight!!",
   "overeager": "ugh soooo bad news, the thing's off, total bummer lol"}),
 ("Please ensure that all documents are submitted by Friday.", "make sure u send all the docs by friday", "informal", {
   "copycat": "Please ensure that all documents are submitted by Friday.",
   "formalizer": "make sure you send in all the docs by friday",
   "drifter": "wanna grab pizza on friday?",
   "overeager": "yo get ur stuff in by fri or whatever, no biggie haha"}),
 ("I would appreciate it if you could call me back.", "can u call me back", "informal", {
   "copycat": "I would appreciate it if you could call me back.",
   "formalizer": "could you call me back?",
   "drifter": "don't call me again lol",
   "overeager": "hit me up sometime dude!!"}),
 ("The restaurant was excellent, and the service was impeccable.",
  "the food was awesome and the service was great", "informal", {
   "copycat": "The restaurant was excellent, and the service was impeccable.",
   "formalizer": "the restaurant was awesome and the service was great",
   "drifter": "the movie was kinda boring tbh",
   "overeager": "omg that place was insane, best night ever!!!"}),
]
# Illustrative ratings by three made-up raters (1-5): NOT collected from people; they only make the demo show
# numbers. Per system: (content_preservation, style_change) centres.
CENTRES = {"copycat": (4.7, 1.4), "formalizer": (4.4, 4.5), "drifter": (1.6, 3.8), "overeager": (3.0, 4.2)}
rng = random.Random(5)
with open("likert_demo_items.jsonl", "w") as items, open("likert_demo_ratings.csv", "w", newline="") as ratings:
    writer = csv.writer(ratings)
    writer.writerow(["item", "annotator", "question", "value"])
    for n, (source, reference, style, outputs) in enumerate(ROWS, start=1):
        for system, rewrite in outputs.items():
            item_id = f"fx{n:02d}-{system}"
            items.write(json.dumps({"id": item_id, "source": source, "rewrite": rewrite, "reference": reference,
                                    "target_style": style, "system": system}, ensure_ascii=False) + "\n")
            for question, centre in zip(("content_preservation", "style_change"), CENTRES[system], strict=True):
                for rater in ("rater-a", "rater-b", "rater-c"):
                    value = min(5, max(1, round(centre + rng.uniform(-1.1, 1.1))))
                    writer.writerow([item_id, rater, question, value])
