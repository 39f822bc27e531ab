package androidx.annotation;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * A compile-time stand-in for AndroidX's {@code androidx.annotation.NonNull} (same name, retention
 * and targets), so that the runtime can be built without Maven. It is not packaged in
 * {@code sessionpolicy.jar}: the jar only names the annotation, which Kotlin reads as a
 * nullability type (String from {@code @NonNull}) whether or not the class is present; an Android app
 * has the real one through AndroidX, and a missing annotation class changes nothing at run time.
 */
@Documented
@Retention(RetentionPolicy.CLASS)
@Target({ElementType.METHOD, ElementType.PARAMETER, ElementType.FIELD, ElementType.LOCAL_VARIABLE,
        ElementType.ANNOTATION_TYPE, ElementType.PACKAGE})
public @interface NonNull {}
