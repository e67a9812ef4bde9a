//! The instance's sub-resources as Mastodon answers them for one domain (`/api/v1/instance/...`):
//! the weekly activity buckets, the rules (from the `INSTANCE_RULES` var) and the languages a
//! post may be tagged with. Pure, so the week arithmetic and the parsing are unit-tested.

use serde::Serialize;

/// How many weekly buckets `/api/v1/instance/activity` answers (Mastodon: 12, this week first).
pub const WEEKS: usize = 12;

const DAY_MS: i64 = 86_400_000;
pub const WEEK_MS: i64 = 7 * DAY_MS;

/// The start (ms, Monday 00:00 UTC, as Mastodon's `beginning_of_week`) of the week `now_ms`
/// falls in. The epoch was a Thursday: Monday is 3 days after it, modulo 7.
pub fn week_start(now_ms: i64) -> i64 {
    let day = now_ms.div_euclid(DAY_MS);
    (day - (day + 3).rem_euclid(7)) * DAY_MS
}

/// The start of the oldest of the [`WEEKS`] buckets: what a count reads from.
pub fn oldest_week(now_ms: i64) -> i64 {
    week_start(now_ms) - (WEEKS as i64 - 1) * WEEK_MS
}

/// One week of Mastodon's `Activity` entity: every number a string, the week as unix seconds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Activity {
    pub week: String,
    pub statuses: String,
    pub logins: String,
    pub registrations: String,
}

/// The [`WEEKS`] buckets, this week first. `registrations` holds `(week index from the oldest
/// week, count)` pairs (summed when an index repeats, as each database answers its own);
/// statuses and logins are not counted (`0`: docs/mastodon.md says why).
pub fn activity(now_ms: i64, registrations: &[(i64, i64)]) -> Vec<Activity> {
    let oldest = oldest_week(now_ms);
    (0..WEEKS as i64)
        .rev()
        .map(|index| {
            let joined: i64 = registrations.iter().filter(|(i, _)| *i == index).map(|(_, n)| n).sum();
            Activity {
                week: ((oldest + index * WEEK_MS) / 1000).to_string(),
                statuses: "0".into(),
                logins: "0".into(),
                registrations: joined.to_string(),
            }
        })
        .collect()
}

/// Mastodon's `Rule` entity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Rule {
    pub id: String,
    pub text: String,
    pub hint: String,
}

/// The rules of the `INSTANCE_RULES` var: one per non-blank line (at most 50, each at most 1000
/// characters), numbered from 1 in order. Unset or blank: none.
pub fn parse_rules(raw: &str) -> Vec<String> {
    raw.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .take(50)
        .map(|line| line.chars().take(1000).collect())
        .collect()
}

/// The configured rules as Mastodon's entities.
pub fn rules(lines: &[String]) -> Vec<Rule> {
    lines
        .iter()
        .enumerate()
        .map(|(i, text)| Rule { id: (i + 1).to_string(), text: text.clone(), hint: String::new() })
        .collect()
}

/// Mastodon's `Language` entity: an ISO 639-1 code and its English name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Language {
    pub code: &'static str,
    pub name: &'static str,
}

/// The languages a status may be tagged with: ISO 639-1, as Mastodon lists them (`language`
/// is accepted on a post and not stored, so any of these is as good as another).
pub const LANGUAGES: &[Language] = &{
    const fn l(code: &'static str, name: &'static str) -> Language {
        Language { code, name }
    }
    [
        l("aa", "Afar"),
        l("ab", "Abkhaz"),
        l("af", "Afrikaans"),
        l("ak", "Akan"),
        l("am", "Amharic"),
        l("an", "Aragonese"),
        l("ar", "Arabic"),
        l("as", "Assamese"),
        l("av", "Avaric"),
        l("ay", "Aymara"),
        l("az", "Azerbaijani"),
        l("ba", "Bashkir"),
        l("be", "Belarusian"),
        l("bg", "Bulgarian"),
        l("bh", "Bihari"),
        l("bi", "Bislama"),
        l("bm", "Bambara"),
        l("bn", "Bengali"),
        l("bo", "Tibetan"),
        l("br", "Breton"),
        l("bs", "Bosnian"),
        l("ca", "Catalan"),
        l("ce", "Chechen"),
        l("ch", "Chamorro"),
        l("co", "Corsican"),
        l("cr", "Cree"),
        l("cs", "Czech"),
        l("cu", "Old Church Slavonic"),
        l("cv", "Chuvash"),
        l("cy", "Welsh"),
        l("da", "Danish"),
        l("de", "German"),
        l("dv", "Divehi"),
        l("dz", "Dzongkha"),
        l("ee", "Ewe"),
        l("el", "Greek"),
        l("en", "English"),
        l("eo", "Esperanto"),
        l("es", "Spanish"),
        l("et", "Estonian"),
        l("eu", "Basque"),
        l("fa", "Persian"),
        l("ff", "Fula"),
        l("fi", "Finnish"),
        l("fj", "Fijian"),
        l("fo", "Faroese"),
        l("fr", "French"),
        l("fy", "Western Frisian"),
        l("ga", "Irish"),
        l("gd", "Scottish Gaelic"),
        l("gl", "Galician"),
        l("gn", "Guarani"),
        l("gu", "Gujarati"),
        l("gv", "Manx"),
        l("ha", "Hausa"),
        l("he", "Hebrew"),
        l("hi", "Hindi"),
        l("ho", "Hiri Motu"),
        l("hr", "Croatian"),
        l("ht", "Haitian"),
        l("hu", "Hungarian"),
        l("hy", "Armenian"),
        l("hz", "Herero"),
        l("ia", "Interlingua"),
        l("id", "Indonesian"),
        l("ie", "Interlingue"),
        l("ig", "Igbo"),
        l("ii", "Nuosu"),
        l("ik", "Inupiaq"),
        l("io", "Ido"),
        l("is", "Icelandic"),
        l("it", "Italian"),
        l("iu", "Inuktitut"),
        l("ja", "Japanese"),
        l("jv", "Javanese"),
        l("ka", "Georgian"),
        l("kg", "Kongo"),
        l("ki", "Kikuyu"),
        l("kj", "Kwanyama"),
        l("kk", "Kazakh"),
        l("kl", "Kalaallisut"),
        l("km", "Khmer"),
        l("kn", "Kannada"),
        l("ko", "Korean"),
        l("kr", "Kanuri"),
        l("ks", "Kashmiri"),
        l("ku", "Kurmanji (Kurdish)"),
        l("kv", "Komi"),
        l("kw", "Cornish"),
        l("ky", "Kyrgyz"),
        l("la", "Latin"),
        l("lb", "Luxembourgish"),
        l("lg", "Ganda"),
        l("li", "Limburgish"),
        l("ln", "Lingala"),
        l("lo", "Lao"),
        l("lt", "Lithuanian"),
        l("lu", "Luba-Katanga"),
        l("lv", "Latvian"),
        l("mg", "Malagasy"),
        l("mh", "Marshallese"),
        l("mi", "Māori"),
        l("mk", "Macedonian"),
        l("ml", "Malayalam"),
        l("mn", "Mongolian"),
        l("mr", "Marathi"),
        l("ms", "Malay"),
        l("mt", "Maltese"),
        l("my", "Burmese"),
        l("na", "Nauru"),
        l("nb", "Norwegian Bokmål"),
        l("nd", "Northern Ndebele"),
        l("ne", "Nepali"),
        l("ng", "Ndonga"),
        l("nl", "Dutch"),
        l("nn", "Norwegian Nynorsk"),
        l("no", "Norwegian"),
        l("nr", "Southern Ndebele"),
        l("nv", "Navajo"),
        l("ny", "Chichewa"),
        l("oc", "Occitan"),
        l("oj", "Ojibwe"),
        l("om", "Oromo"),
        l("or", "Oriya"),
        l("os", "Ossetian"),
        l("pa", "Punjabi"),
        l("pi", "Pāli"),
        l("pl", "Polish"),
        l("ps", "Pashto"),
        l("pt", "Portuguese"),
        l("qu", "Quechua"),
        l("rm", "Romansh"),
        l("rn", "Kirundi"),
        l("ro", "Romanian"),
        l("ru", "Russian"),
        l("rw", "Kinyarwanda"),
        l("sa", "Sanskrit"),
        l("sc", "Sardinian"),
        l("sd", "Sindhi"),
        l("se", "Northern Sami"),
        l("sg", "Sango"),
        l("si", "Sinhala"),
        l("sk", "Slovak"),
        l("sl", "Slovenian"),
        l("sm", "Samoan"),
        l("sn", "Shona"),
        l("so", "Somali"),
        l("sq", "Albanian"),
        l("sr", "Serbian"),
        l("ss", "Swati"),
        l("st", "Southern Sotho"),
        l("su", "Sundanese"),
        l("sv", "Swedish"),
        l("sw", "Swahili"),
        l("ta", "Tamil"),
        l("te", "Telugu"),
        l("tg", "Tajik"),
        l("th", "Thai"),
        l("ti", "Tigrinya"),
        l("tk", "Turkmen"),
        l("tl", "Tagalog"),
        l("tn", "Tswana"),
        l("to", "Tonga"),
        l("tr", "Turkish"),
        l("ts", "Tsonga"),
        l("tt", "Tatar"),
        l("tw", "Twi"),
        l("ty", "Tahitian"),
        l("ug", "Uyghur"),
        l("uk", "Ukrainian"),
        l("ur", "Urdu"),
        l("uz", "Uzbek"),
        l("ve", "Venda"),
        l("vi", "Vietnamese"),
        l("vo", "Volapük"),
        l("wa", "Walloon"),
        l("wo", "Wolof"),
        l("xh", "Xhosa"),
        l("yi", "Yiddish"),
        l("yo", "Yoruba"),
        l("za", "Zhuang"),
        l("zh", "Chinese"),
        l("zu", "Zulu"),
    ]
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weeks_start_on_monday_midnight_utc() {
        // 2026-12-04 (a Friday) 19:00 UTC -> Monday 2026-11-30 00:00 UTC.
        let friday = 1_796_410_800_000;
        assert_eq!(week_start(friday), 1_795_996_800_000);
        assert_eq!(week_start(1_795_996_800_000), 1_795_996_800_000, "a Monday's midnight is its own week");
        assert_eq!(week_start(1_795_996_799_999), 1_795_996_800_000 - WEEK_MS);
    }

    #[test]
    fn activity_is_twelve_weeks_newest_first_with_summed_registrations() {
        let now = 1_796_410_800_000;
        let weeks = activity(now, &[(11, 2), (11, 3), (0, 1)]);
        assert_eq!(weeks.len(), WEEKS);
        assert_eq!(weeks[0].week, (week_start(now) / 1000).to_string());
        assert_eq!(weeks[0].registrations, "5");
        assert_eq!(weeks[11].registrations, "1");
        assert_eq!(weeks[11].week, (oldest_week(now) / 1000).to_string());
        assert!(weeks.iter().all(|w| w.statuses == "0" && w.logins == "0"));
    }

    #[test]
    fn rules_are_the_non_blank_lines_numbered() {
        let lines = parse_rules("  Be kind \n\n No spam\n");
        assert_eq!(lines, vec!["Be kind".to_string(), "No spam".to_string()]);
        let rules = rules(&lines);
        assert_eq!((rules[1].id.as_str(), rules[1].text.as_str()), ("2", "No spam"));
        assert!(parse_rules("").is_empty());
    }

    #[test]
    fn languages_are_unique_two_letter_codes_in_order() {
        assert!(LANGUAGES.windows(2).all(|w| w[0].code < w[1].code));
        assert!(LANGUAGES.iter().all(|l| l.code.len() == 2 && !l.name.is_empty()));
    }
}
