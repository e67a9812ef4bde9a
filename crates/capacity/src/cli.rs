//! The capacity command line (`./scripts/bench capacity [flags]`): which action, and the
//! workload and policy the flags give (the headline's figures by default). One parser for both
//! of its programs: this crate's binary runs the arithmetic (the model, `--headline`,
//! `--simulate-replay`), the bench `benches/capacity.rs` the actions that drive local stacks
//! (`--measure`, `--measure-window`, `--measure-replicas`, `--simulate`); `scripts/bench`
//! sends each to its program.

use crate::model::{Celebrities, Mode, PathMix, Policy, TimelineMix, Workload};

pub const USAGE: &str =
    "usage: ./scripts/bench capacity [--measure | --measure-window | --measure-replicas | --measure-paths | --measure-timelines | --simulate | --simulate-replay
  | --headline] [--databases P]
  [--mode push|hybrid|pull] [--users N] [--daily-active S] [--weekly-active S] [--window-holders S]
  [--follows N] [--tail X] [--celebrities COUNTxFOLLOWERS[,COUNTxFOLLOWERS...]]
  [--celebrity-posts-per-day N] [--posts-per-s R] [--reads-per-s R] [--page-n-share S]
  [--likes-per-s R] [--comments-per-s R] [--follows-per-s R] [--live-share S]
  [--hottest-post-like-share S] [--peak-to-mean X] [--retention-days D]
  [--path-mix mastodon|twitter|none] [--boost-share S] [--reply-share S] [--quote-share S]
  [--direct-share S] [--mentions-per-post N] [--reply-reach S] [--boost-first-hour S]
  [--timeline-mix mastodon|none] [--timeline-share S] [--tag-share S] [--tags-per-post N]
  [--trends-per-day N] [--hottest-tag-share S] [--public-stream-share S]
  [--replicas] [--replica-hydrate-only] [--hot-followers N] [--push-max-followers N] [--fanout-batch N]
  [--before-40] [--databases-per-script N]";

/// What the command line asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// The model for the workload (the default): at `--databases` if given, else at the
    /// smallest P that fits.
    Model,
    /// The headline scenario under push, hybrid and pull side by side.
    Headline,
    /// The last simulation's measurements against the model as it is now.
    SimulateReplay,
    /// Rebuild the cost table from local stacks.
    Measure,
    /// Only the window object's rows, into the table.
    MeasureWindow,
    /// Only the hot-author replicas' costs, into the table.
    MeasureReplicas,
    /// Only the delivery paths' requests (boost, reply, quote, mention, direct), into the table.
    MeasurePaths,
    /// Only the public and tag timelines' figures (#42), into the table.
    MeasureTimelines,
    /// Check the model on a seeded graph driven through local stacks.
    Simulate,
}

impl Action {
    fn of_flag(flag: &str) -> Option<Self> {
        Some(match flag {
            "--measure" => Self::Measure,
            "--measure-window" => Self::MeasureWindow,
            "--measure-replicas" => Self::MeasureReplicas,
            "--measure-paths" => Self::MeasurePaths,
            "--measure-timelines" => Self::MeasureTimelines,
            "--simulate" => Self::Simulate,
            "--simulate-replay" => Self::SimulateReplay,
            "--headline" => Self::Headline,
            _ => return None,
        })
    }

    /// Whether it drives local stacks (the bench's), not only arithmetic on the saved tables.
    pub fn drives_stacks(self) -> bool {
        matches!(
            self,
            Self::Measure
                | Self::MeasureWindow
                | Self::MeasureReplicas
                | Self::MeasurePaths
                | Self::MeasureTimelines
                | Self::Simulate
        )
    }
}

/// What the command line asked for.
#[derive(Debug, Clone, PartialEq)]
pub struct Args {
    pub action: Action,
    pub databases: Option<f64>,
    pub workload: Workload,
    pub policy: Policy,
}

/// `COUNTxFOLLOWERS[,COUNTxFOLLOWERS...]`.
pub fn celebrities(text: &str) -> Result<Vec<Celebrities>, String> {
    text.split(',')
        .filter(|part| !part.is_empty())
        .map(|part| {
            let (count, followers) = part.split_once('x').ok_or(format!("{part}: COUNTxFOLLOWERS"))?;
            Ok(Celebrities {
                count: count.parse().map_err(|_| format!("{part}: bad count"))?,
                followers: followers.parse().map_err(|_| format!("{part}: bad followers"))?,
            })
        })
        .collect()
}

/// The arguments after the program's name; `Err` holds what to print (the usage for `--help`).
/// `--bench`, which `cargo bench` passes, is ignored.
pub fn parse(args: &[String]) -> Result<Args, String> {
    let mut out = Args {
        action: Action::Model,
        databases: None,
        workload: Workload::headline(Mode::Hybrid),
        policy: Policy::default(),
    };
    let mut rest = args.iter().filter(|a| a.as_str() != "--bench");
    while let Some(flag) = rest.next() {
        if let Some(action) = Action::of_flag(flag) {
            out.action = action;
            continue;
        }
        match flag.as_str() {
            // Hot authors served from replicas (#28).
            "--replicas" => out.policy.hot_replicas = true,
            "--replica-hydrate-only" => out.policy.replica_hydrate_only = true,
            // The design before #40, for its bill beside the new one.
            "--before-40" => out.policy.before_40 = true,
            "--help" | "-h" => return Err(USAGE.into()),
            _ => {
                let value = rest.next().ok_or(format!("{flag} needs a value\n{USAGE}"))?;
                out.set(flag, value)?;
            }
        }
    }
    let w = &out.workload;
    if w.users < 1.0 || w.follows_per_user <= 0.0 || w.tail <= 1.0 {
        return Err("--users must be >= 1, --follows > 0 and --tail > 1".into());
    }
    let m = &w.paths;
    let shares =
        [m.boost_share, m.reply_share, m.quote_share, m.direct_share, m.reply_reach, m.boost_first_hour];
    if shares.iter().any(|s| !(0.0..=1.0).contains(s)) || shares[..4].iter().sum::<f64>() > 1.0 + 1e-9 {
        return Err("path shares, --reply-reach and --boost-first-hour must be in [0, 1], the four shares summing to at most 1".into());
    }
    let t = &w.timelines;
    let shares = [t.page_share, t.tag_share, t.hottest_tag_share, t.public_stream_share];
    if shares.iter().any(|s| !(0.0..=1.0).contains(s)) || t.page_share >= 1.0 {
        return Err("timeline shares must be in [0, 1], --timeline-share below 1".into());
    }
    if !(0.0..=10.0).contains(&t.tags_per_post) || t.trends_per_active_day < 0.0 {
        return Err(
            "--tags-per-post must be in [0, 10] (a post's indexed tags), --trends-per-day >= 0".into()
        );
    }
    Ok(out)
}

impl Args {
    /// One flag that takes a value.
    fn set(&mut self, flag: &str, value: &str) -> Result<(), String> {
        if let Some(done) = set_timelines(&mut self.workload.timelines, flag, value) {
            return done;
        }
        let number = || value.parse::<f64>().map_err(|_| format!("{flag} {value}: not a number"));
        let w = &mut self.workload;
        match flag {
            "--databases" => self.databases = Some(number()?.max(1.0).floor()),
            "--mode" => w.mode = Mode::parse(value).ok_or(format!("--mode {value}: push, hybrid or pull"))?,
            "--users" => w.users = number()?,
            "--daily-active" => w.daily_active = number()?,
            "--weekly-active" => w.weekly_active = number()?,
            "--window-holders" => w.window_holders = number()?,
            "--follows" => w.follows_per_user = number()?,
            "--tail" => w.tail = number()?,
            "--celebrities" => w.celebrities = celebrities(value)?,
            "--celebrity-posts-per-day" => w.celebrity_posts_per_day = number()?,
            "--posts-per-s" => w.posts_per_s = number()?,
            "--reads-per-s" => w.feed_reads_per_s = number()?,
            "--page-n-share" => w.page_n_share = number()?,
            "--likes-per-s" => w.likes_per_s = number()?,
            "--comments-per-s" => w.comments_per_s = number()?,
            "--follows-per-s" => w.follows_per_s = number()?,
            "--live-share" => w.live_share = number()?,
            "--hottest-post-like-share" => w.hottest_post_like_share = number()?,
            "--peak-to-mean" => w.peak_to_mean = number()?.max(1.0),
            "--retention-days" => w.retention_days = number()?,
            "--path-mix" => {
                w.paths = match value {
                    "mastodon" => PathMix::mastodon(),
                    "twitter" => PathMix::twitter(),
                    "none" => PathMix::default(),
                    _ => return Err(format!("--path-mix {value}: mastodon, twitter or none")),
                }
            }
            "--boost-share" => w.paths.boost_share = number()?,
            "--reply-share" => w.paths.reply_share = number()?,
            "--quote-share" => w.paths.quote_share = number()?,
            "--direct-share" => w.paths.direct_share = number()?,
            "--mentions-per-post" => w.paths.mentions_per_post = number()?,
            "--reply-reach" => w.paths.reply_reach = number()?,
            "--boost-first-hour" => w.paths.boost_first_hour = number()?,
            "--hot-followers" => self.policy.hot_followers = number()?,
            "--push-max-followers" => self.policy.push_max_followers = number()?,
            "--fanout-batch" => self.policy.fanout_batch = number()?,
            "--databases-per-script" => self.policy.databases_per_script = number()?.max(1.0),
            _ => return Err(format!("unknown flag {flag}\n{USAGE}")),
        }
        Ok(())
    }
}

/// The timeline flags (#42); `None` for another flag.
fn set_timelines(t: &mut TimelineMix, flag: &str, value: &str) -> Option<Result<(), String>> {
    let number = || value.parse::<f64>().map_err(|_| format!("{flag} {value}: not a number"));
    let field = match flag {
        "--timeline-mix" => {
            *t = match value {
                "mastodon" => TimelineMix::mastodon(),
                "none" => TimelineMix::default(),
                _ => return Some(Err(format!("--timeline-mix {value}: mastodon or none"))),
            };
            return Some(Ok(()));
        }
        "--timeline-share" => &mut t.page_share,
        "--tag-share" => &mut t.tag_share,
        "--tags-per-post" => &mut t.tags_per_post,
        "--trends-per-day" => &mut t.trends_per_active_day,
        "--hottest-tag-share" => &mut t.hottest_tag_share,
        "--public-stream-share" => &mut t.public_stream_share,
        _ => return None,
    };
    Some(number().map(|n| *field = n))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Result<Args, String> {
        parse(&line.split_whitespace().map(String::from).collect::<Vec<_>>())
    }

    #[test]
    fn flags_set_the_workload_the_policy_and_the_action_over_the_headline() {
        let a = args("--bench --mode push --users 1000000 --celebrities 1x100000,5x20000 --replicas --databases 63.7 --headline").unwrap();
        assert_eq!(a.action, Action::Headline);
        assert!(!a.action.drives_stacks() && Action::MeasureWindow.drives_stacks());
        assert_eq!(a.databases, Some(63.0));
        assert_eq!((a.workload.mode, a.workload.users), (Mode::Push, 1e6));
        assert_eq!(a.workload.celebrities[1], Celebrities { count: 5.0, followers: 20_000.0 });
        assert!(a.policy.hot_replicas);
        let plain = args("").unwrap();
        assert_eq!((plain.action, plain.workload), (Action::Model, Workload::headline(Mode::Hybrid)));
    }

    #[test]
    fn a_bad_command_line_says_what_is_wrong() {
        assert!(args("--users").unwrap_err().starts_with("--users needs a value\nusage:"));
        assert!(args("--bogus 1").unwrap_err().starts_with("unknown flag --bogus\nusage:"));
        assert_eq!(args("--tail x").unwrap_err(), "--tail x: not a number");
        assert_eq!(args("--celebrities 3").unwrap_err(), "3: COUNTxFOLLOWERS");
        assert_eq!(args("--mode both").unwrap_err(), "--mode both: push, hybrid or pull");
        assert!(args("--tail 1").unwrap_err().contains("--tail > 1"));
        assert_eq!(args("--help").unwrap_err(), USAGE);
        assert!(args("--boost-share 0.8 --reply-share 0.3").unwrap_err().contains("summing to at most 1"));
        assert!(args("--reply-reach 1.5").unwrap_err().contains("in [0, 1]"));
        assert_eq!(args("--path-mix some").unwrap_err(), "--path-mix some: mastodon, twitter or none");
    }

    #[test]
    fn the_path_flags_set_the_mix_over_the_headlines() {
        assert_eq!(args("").unwrap().workload.paths, PathMix::mastodon());
        assert_eq!(args("--path-mix none").unwrap().workload.paths, PathMix::default());
        let a = args("--path-mix twitter --reply-reach 0.5 --mentions-per-post 1").unwrap();
        let m = a.workload.paths;
        assert_eq!(
            (m.boost_share, m.reply_share, m.reply_reach, m.mentions_per_post),
            (0.49, 0.33, 0.5, 1.0)
        );
        assert!((m.original_share() - 0.14).abs() < 1e-9);
    }

    #[test]
    fn the_timeline_flags_set_the_mix_over_the_headlines() {
        assert_eq!(args("").unwrap().workload.timelines, TimelineMix::mastodon());
        assert_eq!(args("--timeline-mix none").unwrap().workload.timelines, TimelineMix::default());
        let t = args("--timeline-share 0.2 --tag-share 0.25 --tags-per-post 1.5 --trends-per-day 3 --hottest-tag-share 0.5 --public-stream-share 0")
            .unwrap()
            .workload
            .timelines;
        assert_eq!(
            (
                t.page_share,
                t.tag_share,
                t.tags_per_post,
                t.trends_per_active_day,
                t.hottest_tag_share,
                t.public_stream_share
            ),
            (0.2, 0.25, 1.5, 3.0, 0.5, 0.0)
        );
        assert!(args("--timeline-share 1").unwrap_err().contains("below 1"));
        assert!(args("--hottest-tag-share 2").unwrap_err().contains("in [0, 1]"));
        assert!(args("--tags-per-post 11").unwrap_err().contains("[0, 10]"));
        assert_eq!(args("--timeline-mix all").unwrap_err(), "--timeline-mix all: mastodon or none");
        assert!(Action::MeasureTimelines.drives_stacks());
        assert_eq!(args("--measure-timelines").unwrap().action, Action::MeasureTimelines);
    }
}
