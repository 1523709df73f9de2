//! Internally tagged JSON objects (`{"type": "text", …}`, `{"role": "user", …}`) read in one
//! pass when the tag is the first key, as pi writes them. serde's derived internally tagged
//! enums buffer every object (and copy every string) before choosing the variant; here the
//! variant is chosen from the first key and its fields are read straight from the input.
//! An object whose tag comes later is buffered and read the slow way.

use std::fmt;
use std::marker::PhantomData;

use serde::de::value::MapAccessDeserializer;
use serde::de::{
    self, DeserializeOwned, DeserializeSeed, Deserializer, EnumAccess, IgnoredAny,
    IntoDeserializer, MapAccess, VariantAccess, Visitor,
};
use serde::{Deserialize, forward_to_deserialize_any};
use serde_json::{Map, Value};

/// Reads an object tagged by `tag` into `W`, an externally tagged enum (`{"<tag value>":
/// {…the other fields…}}` in serde's terms) whose variants hold the fields.
pub fn deserialize_tag_first<'de, D, W>(deserializer: D, tag: &'static str) -> Result<W, D::Error>
where
    D: Deserializer<'de>,
    W: DeserializeOwned,
{
    deserializer.deserialize_map(TagFirstVisitor {
        tag,
        wire: PhantomData,
    })
}

/// Reads `W` (as in [`deserialize_tag_first`]) when the tag's value `variant` has been read
/// already and `rest` holds the other fields.
pub fn deserialize_variant<'de, A, W>(variant: String, rest: A) -> Result<W, A::Error>
where
    A: MapAccess<'de>,
    W: Deserialize<'de>,
{
    W::deserialize(TaggedEnum { variant, rest })
}

struct TagFirstVisitor<W> {
    tag: &'static str,
    wire: PhantomData<W>,
}

impl<'de, W: DeserializeOwned> Visitor<'de> for TagFirstVisitor<W> {
    type Value = W;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "an object with a \"{}\" field", self.tag)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<W, A::Error> {
        let Some(first) = map.next_key::<String>()? else {
            return Err(de::Error::missing_field(self.tag));
        };
        if first == self.tag {
            let variant: String = map.next_value()?;
            return W::deserialize(TaggedEnum { variant, rest: map });
        }
        // The slow way: buffer the object, take the tag out, read the rest.
        let mut object = Map::new();
        object.insert(first, map.next_value()?);
        while let Some((key, value)) = map.next_entry::<String, Value>()? {
            object.insert(key, value);
        }
        let variant = match object.shift_remove(self.tag) {
            Some(Value::String(variant)) => variant,
            Some(_) => {
                return Err(de::Error::custom(format!(
                    "\"{}\" is not a string",
                    self.tag
                )));
            }
            None => return Err(de::Error::missing_field(self.tag)),
        };
        let mut wrapped = Map::with_capacity(1);
        wrapped.insert(variant, Value::Object(object));
        serde_json::from_value(Value::Object(wrapped)).map_err(de::Error::custom)
    }
}

/// The variant name and the rest of the object, offered as an enum.
struct TaggedEnum<A> {
    variant: String,
    rest: A,
}

impl<'de, A: MapAccess<'de>> Deserializer<'de> for TaggedEnum<A> {
    type Error = A::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, A::Error> {
        visitor.visit_enum(self)
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

impl<'de, A: MapAccess<'de>> EnumAccess<'de> for TaggedEnum<A> {
    type Error = A::Error;
    type Variant = Rest<A>;

    fn variant_seed<S: DeserializeSeed<'de>>(
        self,
        seed: S,
    ) -> Result<(S::Value, Rest<A>), A::Error> {
        let variant = seed.deserialize(self.variant.into_deserializer())?;
        Ok((variant, Rest(self.rest)))
    }
}

/// The fields after the tag.
struct Rest<A>(A);

impl<'de, A: MapAccess<'de>> VariantAccess<'de> for Rest<A> {
    type Error = A::Error;

    fn unit_variant(mut self) -> Result<(), A::Error> {
        while self.0.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(())
    }

    fn newtype_variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<S::Value, A::Error> {
        seed.deserialize(MapAccessDeserializer::new(self.0))
    }

    fn tuple_variant<V: Visitor<'de>>(
        self,
        _len: usize,
        _visitor: V,
    ) -> Result<V::Value, A::Error> {
        Err(de::Error::invalid_type(de::Unexpected::Map, &"a tuple"))
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, A::Error> {
        visitor.visit_map(self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, Deserialize)]
    struct Text {
        text: String,
        #[serde(default)]
        n: u32,
    }

    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(rename_all = "camelCase")]
    enum Wire {
        Text(Text),
        Pair { a: u32, b: u32 },
    }

    fn read(json: &str) -> Result<Wire, serde_json::Error> {
        let mut de = serde_json::Deserializer::from_str(json);
        deserialize_tag_first(&mut de, "type")
    }

    #[test]
    fn tag_first_or_later_gives_the_same_value() {
        let text = Wire::Text(Text {
            text: "hi".into(),
            n: 2,
        });
        assert_eq!(read(r#"{"type":"text","text":"hi","n":2}"#).unwrap(), text);
        assert_eq!(read(r#"{"text":"hi","type":"text","n":2}"#).unwrap(), text);
        assert_eq!(
            read(r#"{"type":"pair","b":2,"a":1,"extra":[1]}"#).unwrap(),
            Wire::Pair { a: 1, b: 2 }
        );
        let value = serde_json::json!({"type": "text", "text": "v"});
        let from_value: Wire = deserialize_tag_first(value, "type").unwrap();
        assert_eq!(
            from_value,
            Wire::Text(Text {
                text: "v".into(),
                n: 0
            })
        );
    }

    #[test]
    fn unknown_tags_and_missing_fields_are_errors() {
        assert!(
            read(r#"{"type":"other","text":"hi"}"#)
                .unwrap_err()
                .to_string()
                .contains("unknown variant")
        );
        assert!(
            read(r#"{"type":"text"}"#)
                .unwrap_err()
                .to_string()
                .contains("missing field `text`")
        );
        assert!(
            read(r#"{"text":"hi"}"#)
                .unwrap_err()
                .to_string()
                .contains("missing field `type`")
        );
        assert!(read("[1]").is_err());
    }
}
